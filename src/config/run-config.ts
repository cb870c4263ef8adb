import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';
import type { RelayConfig } from './relay-config.js';

/** The config of a command that works on one slot (run, status): the slot is known. */
export type RunConfig = RelayConfig & { readonly slot: string };

/** Narrows a resolved config to a RunConfig, or fails the way any invalid option does. */
export function toRunConfig(config: RelayConfig): RunConfig {
  const { slot } = config;
  if (!slot) {
    throw new OutboxTailError('CONFIG_INVALID', 'invalid configuration:\n  --slot / OUTBOX_TAIL_SLOT: required', {
      hint: 'name the replication slot to tail, e.g. --slot orders_outbox',
      exitCode: EXIT.CONFIG,
    });
  }
  return { ...config, slot };
}
