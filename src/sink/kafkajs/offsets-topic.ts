import kafkajs, { type Admin } from 'kafkajs';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import { createTopicsAndWait } from '../../kafka/kafkajs/create-topics.js';

// A CommonJS enum: ESM sees it only on the default export.
const { ConfigResourceTypes } = kafkajs;

const initHint = (topic: string) =>
  `run \`outbox-tail init --delivery exactly-once\` (creates ${topic} with cleanup.policy=compact), or create it yourself compacted; --offsets-topic names another`;

/**
 * The offsets topic must exist and be compacted: an auto-created topic with
 * delete retention would lose the slot's watermark after retention.ms, and
 * the relay would then publish everything the slot still holds again.
 */
export async function checkOffsetsTopic(admin: Admin, topic: string): Promise<void> {
  const topics = await admin.listTopics();
  if (!topics.includes(topic)) {
    throw new OutboxTailError('OFFSETS_TOPIC_INVALID', `exactly-once delivery: the offsets topic ${topic} does not exist`, { hint: initHint(topic) });
  }
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['cleanup.policy'] }],
  });
  const policy = described.resources[0]?.configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue ?? '';
  if (!policy.split(',').includes('compact')) {
    throw new OutboxTailError(
      'OFFSETS_TOPIC_INVALID',
      `exactly-once delivery: the offsets topic ${topic} has cleanup.policy=${policy || '(unknown)'}, not compact`,
      {
        hint: `make it compacted: kafka-configs.sh --alter --entity-type topics --entity-name ${topic} --add-config cleanup.policy=compact`,
      },
    );
  }
}

/** `outbox-tail init --delivery exactly-once`: creates the offsets topic compacted (one partition: a few records per slot), if missing. */
export async function createOffsetsTopic(admin: Admin, topic: string): Promise<boolean> {
  const existing = await admin.listTopics();
  if (existing.includes(topic)) {
    await checkOffsetsTopic(admin, topic);
    return false;
  }
  await createTopicsAndWait(admin, [{ topic, numPartitions: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }]);
  return true;
}
