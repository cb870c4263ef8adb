import type { Admin, ITopicConfig } from 'kafkajs';

/** Kafka error types that only mean "the new topic's metadata has not reached this broker yet". */
const NOT_YET_KNOWN = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

/**
 * admin.createTopics({ waitForLeaders: true }) without its flaw: kafkajs 2.2.4 retries the leader
 * wait only on LEADER_NOT_AVAILABLE and gives up on UNKNOWN_TOPIC_OR_PARTITION ("This server does
 * not host this topic-partition"), which a KRaft broker answers while the topic it just created is
 * not yet in its metadata (seen in CI: an exactly-once crash test failed 0.7 s in). Returns false
 * when every topic existed already, like createTopics.
 */
export async function createTopicsAndWait(admin: Admin, topics: ITopicConfig[], timeoutMs = 30_000): Promise<boolean> {
  if (topics.length === 0) return false;
  const created = await admin.createTopics({ topics, waitForLeaders: false });
  const names = topics.map((t) => t.topic);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: found } = await admin.fetchTopicMetadata({ topics: names });
      if (found.length === names.length && found.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return created;
    } catch (error) {
      if (!NOT_YET_KNOWN.has((error as { type?: string }).type ?? '') || Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error(`topics ${names.join(', ')} have no leader for every partition after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
