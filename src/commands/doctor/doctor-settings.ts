import type { PreflightSettings } from '../../relay/preflight.js';
import type { SinkSettings } from '../../sink/create-sink.js';

/**
 * What the doctor reads of the config: what preflight and the sink need (it checks their ground), plus the
 * options whose misuse it looks for. The CLI passes the resolved config; nothing here sees the whole type.
 */
export interface DoctorSettings extends PreflightSettings, SinkSettings {
  slot: string;
  topic: string;
  deadLetterTopic?: string | undefined;
  heartbeatIntervalMs: number;
  onSlotLost: 'halt' | 'recover';
  /** --primary-url: with --database-url on a hot standby, the primary (its wal_level is checked). */
  primaryUrl?: string | undefined;
}
