/**
 * The real daemon (runDaemon: preflight, observability, Relay, sessions,
 * checkpointer, status updates) with the NullSink instead of Kafka, configured
 * through OUTBOX_TAIL_* like bin/outbox-tail.js:
 *
 *   OUTBOX_TAIL_SLOT=... OUTBOX_TAIL_DATABASE_URL=... node --import tsx dev/bench/null-sink-relay.ts
 *
 * Prints the relay's JSON logs, then one `{"event":"null-sink","records":N,...}` line at exit.
 */
import { resolveConfigModule, runDaemonModule } from './dist.js';
import { NullSink } from './null-sink.js';

const { runDaemon } = await runDaemonModule();
const { resolveConfig } = await resolveConfigModule();

const config = resolveConfig({ env: process.env });
if (!config.slot) throw new Error('OUTBOX_TAIL_SLOT is required');
const sinks: NullSink[] = [];
runDaemon(
  { ...config, slot: config.slot },
  {
    sinkFactory: () => {
      const s = new NullSink();
      sinks.push(s);
      return s;
    },
  },
).then(
  (code) => {
    const records = sinks.reduce((n, s) => n + s.records, 0);
    const batches = sinks.reduce((n, s) => n + s.batches, 0);
    process.stdout.write(`${JSON.stringify({ event: 'null-sink', records, batches, sessions: sinks.filter((s) => s.connected).length })}\n`);
    process.exit(code);
  },
  (error) => {
    process.stderr.write(`null-sink-relay: ${error?.stack ?? error}\n`);
    process.exit(error?.exitCode ?? 1);
  },
);
