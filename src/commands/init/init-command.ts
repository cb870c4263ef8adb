import { EXIT } from '../../shared/outbox-tail-error.js';
import { withPgClient } from '../../postgres/with-pg-client.js';
import { defineCommand } from '../command.js';
import { initOutbox, type InitResult } from './init.js';
import { initOffsetsTopic } from './init-offsets-topic.js';
import { initShardedOutbox, type ShardInitResult } from './init-shards.js';

function initLines({ migrations, publication, slot }: InitResult): string[] {
  return [
    `migrations: applied ${migrations.applied.join(', ') || 'none'}; already applied ${migrations.skipped.length}`,
    publication.created ? `publication ${publication.name} created for ${publication.table}` : `publication ${publication.name} exists`,
    ...(slot
      ? [
          slot.created
            ? `slot ${slot.name} created (pgoutput${slot.failover ? ', failover = true' : ''})`
            : `slot ${slot.name} exists${slot.failover === null ? '' : ` (failover = ${slot.failover})`}`,
        ]
      : []),
  ];
}

function shardInitLines({ migrations, shards, messagePrefixes }: ShardInitResult): string[] {
  return [
    `migrations: applied ${migrations.applied.join(', ') || 'none'}; already applied ${migrations.skipped.length}`,
    ...shards.map(
      (s) =>
        `shard ${s.index}/${shards.length}: publication ${s.publication.name} ${s.publication.created ? 'created' : 'exists'}` +
        (s.slot ? `, slot ${s.slot.name} ${s.slot.created ? 'created' : 'exists'}` : ''),
    ),
    ...(messagePrefixes ? [`outbox_tail.emit writes to message prefixes ${messagePrefixes.join(', ')}`] : []),
  ];
}

export const initCommand = defineCommand({
  names: ['init'],
  describe: 'apply migrations/, create the publication and (with --slot) the slot if missing',
  options: {},
  config: (resolved) => resolved,
  async run(config, _args, io) {
    const { shards } = config;
    let lines: string[];
    if (shards === undefined) {
      const { primaryUrl } = config;
      const result = await withPgClient(config, (client) =>
        primaryUrl === undefined
          ? initOutbox(client, config)
          : withPgClient({ ...config, databaseUrl: primaryUrl, databaseUrlFile: undefined }, (primary) => initOutbox(client, config, primary)),
      );
      lines = initLines(result);
      for (const warning of result.warnings) io.warn(warning);
    } else {
      lines = shardInitLines(await withPgClient(config, (client) => initShardedOutbox(client, { ...config, shards })));
    }
    if (config.delivery === 'exactly-once') {
      const offsets = await initOffsetsTopic(config);
      lines.push(
        offsets.created ? `offsets topic ${offsets.topic} created (cleanup.policy=compact)` : `offsets topic ${offsets.topic} exists and is compacted`,
      );
    }
    return lines;
  },
  format: (lines) => ({ stdout: `${lines.join('\n')}\n`, exitCode: EXIT.OK }),
});
