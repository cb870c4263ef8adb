import type { Admin } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createTopicsAndWait } from '../../../src/kafka/kafkajs/create-topics.js';

/** An admin whose metadata answers come from a script, one per call. */
function scriptedAdmin(answers: Array<Error | number[]>): { admin: Admin; calls: () => number } {
  let calls = 0;
  const admin = {
    createTopics: async () => true,
    fetchTopicMetadata: async () => {
      const answer = answers[Math.min(calls++, answers.length - 1)]!;
      if (answer instanceof Error) throw answer;
      return { topics: [{ name: 't', partitions: answer.map((leader, partitionId) => ({ partitionId, leader })) }] };
    },
  } as unknown as Admin;
  return { admin, calls: () => calls };
}

const kafkaError = (type: string) => Object.assign(new Error(type), { type });

describe('createTopicsAndWait', () => {
  it('keeps waiting while the broker does not know the new topic yet (UNKNOWN_TOPIC_OR_PARTITION), and until every partition has a leader', async () => {
    const { admin, calls } = scriptedAdmin([kafkaError('UNKNOWN_TOPIC_OR_PARTITION'), kafkaError('LEADER_NOT_AVAILABLE'), [0, -1], [0, 0]]);
    await expect(createTopicsAndWait(admin, [{ topic: 't', numPartitions: 2 }])).resolves.toBe(true);
    expect(calls()).toBe(4);
  });

  it('rethrows any other error at once', async () => {
    const { admin, calls } = scriptedAdmin([kafkaError('TOPIC_AUTHORIZATION_FAILED')]);
    await expect(createTopicsAndWait(admin, [{ topic: 't' }])).rejects.toThrow('TOPIC_AUTHORIZATION_FAILED');
    expect(calls()).toBe(1);
  });

  it('gives up after its timeout, naming the topics', async () => {
    const { admin } = scriptedAdmin([[-1]]);
    await expect(createTopicsAndWait(admin, [{ topic: 't' }], 300)).rejects.toThrow('topics t have no leader for every partition after 300 ms');
  });
});
