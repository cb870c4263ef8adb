import kafkajs, { type Admin } from 'kafkajs';
import type { DoctorSettings } from './doctor-settings.js';
import type { OutboxEvent } from '../../pipeline/outbox-event.js';
import { commandKafka, withKafkaAdmin } from '../../kafka/kafkajs/with-kafka-admin.js';
import { compileTopicTemplate } from '../../pipeline/publish/record-format/topic-template.js';
import type { KafkaFacts, KafkaTopicFacts, PostgresFacts } from './doctor-facts.js';

// A CommonJS enum: ESM sees it only on the default export.
const { ConfigResourceTypes } = kafkajs;

/** The topic names the template gives the outbox's rows (plus the dead-letter topic). */
export function expectedTopics(config: DoctorSettings, values: PostgresFacts['templateValues']): string[] {
  const render = compileTopicTemplate(config.topic);
  // Names that depend on the rows are known only from the rows; a fixed name or one of {table} only is known without them.
  const byRow = /\{(aggregate_type|event_type)\}/.test(config.topic);
  const rows = byRow ? values : [{ aggregateType: '', eventType: '' }];
  const names = rows.map((v) => render({ aggregateType: v.aggregateType, eventType: v.eventType, table: config.table } as OutboxEvent));
  if (config.deadLetterTopic) names.push(config.deadLetterTopic);
  return [...new Set(names)].sort();
}

/**
 * The template as a pattern of topic names ({aggregate_type} and the like match any legal name part), so
 * that existing topics are checked even when the outbox's rows cannot be read (a least-privilege role); null
 * for a fixed name.
 */
export function topicPattern(template: string): RegExp | null {
  const parts = template.split(/(\{aggregate_type\}|\{event_type\}|\{table\})/);
  if (parts.length === 1) return null;
  return new RegExp(`^${parts.map((p) => (p.startsWith('{') ? '[A-Za-z0-9._-]+' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`);
}

/** Reads the topics, their configs and the brokers' transaction limit with the relay's own Kafka settings (TLS, SASL). */
export function gatherKafkaFacts(config: DoctorSettings, topicNames: string[]): Promise<KafkaFacts> {
  // Errors as kafkajs threw them: run-doctor turns an unreachable Kafka into a failed check.
  return withKafkaAdmin(commandKafka(config, { name: 'doctor', retries: 1 }), null, async (admin) => {
    const cluster = await admin.describeCluster();
    const existing = new Set(await admin.listTopics());
    const pattern = topicPattern(config.topic);
    const matching = pattern ? [...existing].filter((t) => pattern.test(t) && t !== config.offsetsTopic && t !== config.deadLetterTopic) : [];
    const outboxTopics = [...new Set([...topicNames, ...matching])].sort();
    const all = [...new Set([...outboxTopics, config.offsetsTopic])];
    const present = all.filter((t) => existing.has(t));
    const facts = new Map<string, KafkaTopicFacts>(all.map((name) => [name, emptyTopic(name)]));
    if (present.length > 0) {
      const metadata = await admin.fetchTopicMetadata({ topics: present });
      for (const t of metadata.topics) {
        const f = facts.get(t.name)!;
        f.exists = true;
        f.partitions = t.partitions.length;
        f.replicationFactor = t.partitions.find((p) => p.partitionId === 0)?.replicas.length ?? t.partitions[0]?.replicas.length ?? null;
      }
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: present.map((name) => ({
          type: ConfigResourceTypes.TOPIC,
          name,
          configNames: ['min.insync.replicas', 'retention.ms', 'cleanup.policy', 'compression.type'],
        })),
      });
      for (const r of described.resources) {
        const f = facts.get(r.resourceName);
        if (!f) continue;
        const value = (n: string) => r.configEntries.find((e) => e.configName === n)?.configValue ?? null;
        f.minInsyncReplicas = numberOrNull(value('min.insync.replicas'));
        f.retentionMs = numberOrNull(value('retention.ms'));
        f.cleanupPolicy = value('cleanup.policy');
        f.compressionType = value('compression.type');
      }
    }
    return {
      brokers: cluster.brokers.length,
      topics: outboxTopics.map((n) => facts.get(n)!),
      offsetsTopic: facts.get(config.offsetsTopic)!,
      transactionMaxTimeoutMs: await transactionMaxTimeout(admin, cluster),
    };
  });
}

function emptyTopic(name: string): KafkaTopicFacts {
  return {
    name,
    exists: false,
    partitions: null,
    replicationFactor: null,
    minInsyncReplicas: null,
    retentionMs: null,
    cleanupPolicy: null,
    compressionType: null,
  };
}

function numberOrNull(v: string | null): number | null {
  return v === null || v === '' || Number.isNaN(Number(v)) ? null : Number(v);
}

async function transactionMaxTimeout(admin: Admin, cluster: { brokers: { nodeId: number }[]; controller: number | null }): Promise<number | null> {
  const broker = cluster.controller ?? cluster.brokers[0]?.nodeId;
  if (broker === undefined || broker === null) return null;
  try {
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.BROKER, name: String(broker), configNames: ['transaction.max.timeout.ms'] }],
    });
    return numberOrNull(described.resources[0]?.configEntries.find((e) => e.configName === 'transaction.max.timeout.ms')?.configValue ?? null);
  } catch {
    return null;
  }
}
