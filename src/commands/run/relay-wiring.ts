import type { RunConfig } from '../../config/run-config.js';
import type { PreflightSettings } from '../../relay/preflight.js';
import type { ObservabilitySettings } from '../../observability/observability.js';
import type { PgSettings } from '../../postgres/pg-connection.js';
import type { RecoverSettings } from '../recover/recover-slot.js';
import type { SinkSettings } from '../../sink/create-sink.js';
import type { SupervisorSettings } from '../../relay/relay.js';
import type { SessionSettings } from '../../relay/relay-session.js';
import { createValueEncoder, type ValueFormatSettings } from '../../pipeline/publish/record-format/value-encoder.js';

/** The daemon's stages, each with the settings it uses and nothing else. */
export interface RelayStages {
  pg: PgSettings;
  preflight: PreflightSettings;
  supervisor: SupervisorSettings;
  session: SessionSettings;
  sink: SinkSettings;
  observability: ObservabilitySettings;
  /** --on-slot-lost recover: what `outbox-tail recover` uses, run by the daemon. */
  recover: RecoverSettings;
}

/**
 * The one place where the daemon's whole config is split into what each
 * stage uses (docs/architecture.md#wiring). A stage that needs another option
 * gets it here, in its own settings type, so each type says what its stage
 * depends on; `npm run lint` (dependency-cruiser) keeps the config type out
 * of every module but the config's own and the CLI's (this one among them).
 */
export function relayStages(config: RunConfig): RelayStages {
  const pg: PgSettings = {
    databaseUrl: config.databaseUrl,
    databaseUrlFile: config.databaseUrlFile,
    pgPasswordFile: config.pgPasswordFile,
    pgPasswordCommand: config.pgPasswordCommand,
    pgAuth: config.pgAuth,
    awsRegion: config.awsRegion,
    connectTimeoutMs: config.connectTimeoutMs,
    pgSslmode: config.pgSslmode,
    pgSslrootcert: config.pgSslrootcert,
    pgSslcert: config.pgSslcert,
    pgSslkey: config.pgSslkey,
  };
  const columns = {
    columnId: config.columnId,
    columnAggregateType: config.columnAggregateType,
    columnAggregateId: config.columnAggregateId,
    columnEventType: config.columnEventType,
    columnPayload: config.columnPayload,
    columnHeaders: config.columnHeaders,
    columnCreatedAt: config.columnCreatedAt,
  };
  const { slot, publication, source, table } = config;
  // The primary of a hot standby (--primary-url): what cannot happen in recovery is done there.
  const primaryPg = config.primaryUrl === undefined ? null : { ...pg, databaseUrl: config.primaryUrl, databaseUrlFile: undefined };
  const sink = sinkSettings(config);
  const valueFormat: ValueFormatSettings = {
    valueFormat: config.valueFormat,
    schemaRegistryUrl: config.schemaRegistryUrl,
    schemaRegistrySubject: config.schemaRegistrySubject,
    schemaRegistryRefreshMs: config.schemaRegistryRefreshMs,
    schemaRegistryUsername: config.schemaRegistryUsername,
    schemaRegistryPassword: config.schemaRegistryPassword,
  };
  return {
    pg,
    preflight: {
      ...pg,
      ...columns,
      slot,
      publication,
      source,
      table,
      createSlot: config.createSlot,
      failoverSlot: config.failoverSlot,
      shard: config.shard,
      primary: primaryPg,
      heartbeatIntervalMs: config.heartbeatIntervalMs,
    },
    supervisor: {
      slot,
      restartBackoffInitialMs: config.restartBackoffInitialMs,
      restartBackoffMaxMs: config.restartBackoffMaxMs,
      standbyRetryMs: config.standbyRetryMs,
    },
    session: {
      ...columns,
      slot,
      publication,
      source,
      table,
      messagePrefix: config.messagePrefix,
      topic: config.topic,
      recordHeaders: config.recordHeaders,
      recordFormat: config.recordFormat,
      cloudeventsSource: config.cloudeventsSource,
      batchMaxMessages: config.batchMaxMessages,
      batchMaxBytes: config.batchMaxBytes,
      batchMaxWaitMs: config.batchMaxWaitMs,
      maxInFlightMessages: config.maxInFlightMessages,
      maxInFlightBytes: config.maxInFlightBytes,
      onOversize: config.onOversize,
      onMalformed: config.onMalformed,
      deadLetterTopic: config.deadLetterTopic,
      statusIntervalMs: config.statusIntervalMs,
      replicationTimeoutMs: config.replicationTimeoutMs,
      heartbeatIntervalMs: config.heartbeatIntervalMs,
      // pg_logical_emit_message cannot run on a standby: with --primary-url the heartbeat writes on the primary.
      heartbeatPg: primaryPg,
      offsetsTopic: config.offsetsTopic,
      // One encoder for the daemon's life: its schema cache outlives session restarts.
      valueEncoder: createValueEncoder(valueFormat),
    },
    sink,
    observability: {
      ...pg,
      slot,
      publication,
      slotPollIntervalMs: config.slotPollIntervalMs,
      stallTimeoutMs: config.stallTimeoutMs,
      metricsListen: config.metricsListen,
    },
    recover: {
      ...sink,
      ...columns,
      ...valueFormat,
      slot,
      table,
      topic: config.topic,
      recordHeaders: config.recordHeaders,
      recordFormat: config.recordFormat,
      cloudeventsSource: config.cloudeventsSource,
      failoverSlot: config.failoverSlot,
    },
  };
}

/** The sink's settings: the client, the thread, the delivery and the Kafka connection. */
function sinkSettings(config: RunConfig): SinkSettings {
  return {
    kafkaClient: config.kafkaClient,
    sinkThread: config.sinkThread,
    delivery: config.delivery,
    slot: config.slot,
    transactionalId: config.transactionalId,
    offsetsTopic: config.offsetsTopic,
    transactionTimeoutMs: config.transactionTimeoutMs,
    transactionLanes: config.transactionLanes,
    logLevel: config.logLevel,
    brokers: config.brokers,
    clientId: config.clientId,
    kafkaRetries: config.kafkaRetries,
    connectTimeoutMs: config.connectTimeoutMs,
    kafkaRequestTimeoutMs: config.kafkaRequestTimeoutMs,
    allowAutoTopicCreation: config.allowAutoTopicCreation,
    maxInFlightRequests: config.maxInFlightRequests,
    compression: config.compression,
    kafkaSsl: config.kafkaSsl,
    kafkaSslCa: config.kafkaSslCa,
    kafkaSslCert: config.kafkaSslCert,
    kafkaSslKey: config.kafkaSslKey,
    saslMechanism: config.saslMechanism,
    saslUsername: config.saslUsername,
    saslPassword: config.saslPassword,
    saslOauthTokenEndpoint: config.saslOauthTokenEndpoint,
    saslOauthClientId: config.saslOauthClientId,
    saslOauthClientSecret: config.saslOauthClientSecret,
    saslOauthScope: config.saslOauthScope,
    saslOauthExtensions: config.saslOauthExtensions,
    awsRegion: config.awsRegion,
  };
}
