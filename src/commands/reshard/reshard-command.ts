import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';
import { MAX_SHARDS, shardNamesTooLong } from '../../shared/shard-spec.js';
import { withPgClient } from '../../postgres/with-pg-client.js';
import { toRunConfig } from '../../config/run-config.js';
import { MAX_TIMER_MS } from '../../shared/max-timer-ms.js';
import { defineCommand, JSON_OPTION, jsonLine, wholeNumberOption } from '../command.js';
import { reshard, type ReshardStep } from './reshard.js';

function reshardStepLines(s: ReshardStep): string[] {
  switch (s.step) {
    case 'created':
      return [`1. new slots ${s.slots.join(', ')} created; consistent point ${s.consistentPoint}. Keep the old relays running.`];
    case 'old-past-new':
      return [`2. every old slot confirmed past the consistent point (${s.oldConfirmed.join(', ')}).`];
    case 'stop-old-start-new':
      return [`3. NOW stop the old relays (SIGTERM) of ${s.stop.join(', ')}, then start the new ones:`, ...s.start.map((c) => `     ${c}`)];
    case 'new-past-old':
      return [`4. every new slot confirmed past the old slots' last position ${s.oldLastConfirmed} (${s.newConfirmed.join(', ')}).`];
    case 'dropped':
      return [`5. dropped the old slots ${s.slots.join(', ')} and publications ${s.publications.join(', ')}.`];
  }
}

export const reshardCommand = defineCommand({
  names: ['reshard'],
  describe:
    'move a running sharded outbox from --from N to --to M shards without loss (at least once; docs/sharding.md): creates the new set, says when to stop the old relays and start the new, drops the old slots',
  options: {
    from: { type: 'number', demandOption: true, describe: 'the shards running now (N of --shard i/N)' },
    to: { type: 'number', demandOption: true, describe: 'the shards to move to' },
    'to-slot': { type: 'string', describe: 'base slot name of the new set [default: <slot>_n<to>]' },
    'to-publication': { type: 'string', describe: 'base publication name of the new set [default: <publication>_n<to>]' },
    'step-timeout-ms': wholeNumberOption('step-timeout-ms', {
      min: 1,
      max: MAX_TIMER_MS,
      default: 600_000,
      describe: 'how long each wait may take before reshard gives up (nothing dropped)',
    }),
    json: JSON_OPTION,
  },
  config: toRunConfig,
  run(config, args, io) {
    const { from, to } = args;
    for (const [flag, n] of [
      ['from', from],
      ['to', to],
    ] as const) {
      if (!Number.isInteger(n) || n < 1 || n > MAX_SHARDS) {
        throw new OutboxTailError('CONFIG_INVALID', `invalid configuration:\n  --${flag}: expected a whole number 1-${MAX_SHARDS}`, {
          hint: 'e.g. --from 2 --to 4',
          exitCode: EXIT.CONFIG,
        });
      }
    }
    const options = {
      ...config,
      from,
      to,
      toSlot: args['to-slot'] ?? `${config.slot}_n${to}`,
      toPublication: args['to-publication'] ?? `${config.publication}_n${to}`,
      stepTimeoutMs: args['step-timeout-ms'],
    };
    // Before connecting: a name PostgreSQL would truncate could make two shards share one slot.
    const names = [
      ['slot', config.slot, from],
      ['publication', config.publication, from],
      ['to-slot', options.toSlot, to],
      ['to-publication', options.toPublication, to],
    ] as const;
    const tooLong = names.flatMap(([flag, base, count]) => {
      const why = shardNamesTooLong(base, count);
      return why === undefined ? [] : [`  --${flag} ${base}: ${why}`];
    });
    if (tooLong.length > 0) {
      throw new OutboxTailError('CONFIG_INVALID', `invalid configuration:\n${tooLong.join('\n')}`, {
        hint: 'give shorter base names (--slot, --publication, --to-slot, --to-publication)',
        exitCode: EXIT.CONFIG,
      });
    }
    return withPgClient(config, (client) =>
      reshard(client, options, (step) => {
        if (!args.json) for (const line of reshardStepLines(step)) io.progress(line);
      }),
    );
  },
  format: (report, args) => ({
    stdout: args.json
      ? jsonLine(report)
      : `resharded ${report.from} -> ${report.to}; republished overlap ${report.overlapBytes} bytes of WAL (at least once)\n`,
    exitCode: EXIT.OK,
  }),
});
