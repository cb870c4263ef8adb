import type { LogicalReplicationService } from 'pg-logical-replication';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';

/** The part of node-postgres' Connection we drive directly. */
export interface ReplicationConnection {
  stream?: { pause(): void; resume(): void };
  sendCopyFromChunk(chunk: Buffer): void;
}

/** The private field of pg-logical-replication 2.5.0 that holds the connection (package.json pins that version). */
export const LIBRARY_CONNECTION_FIELD = '_connection';

/**
 * pg-logical-replication does not expose its connection, and we need it to
 * pause the socket (backpressure) and to send status updates with the exact
 * LSN (its acknowledge() sends lsn + 1). A library upgrade that drops the field must stop the
 * relay with this message rather than silently lose backpressure and confirms.
 */
export function libraryConnection(service: LogicalReplicationService): ReplicationConnection | null {
  if (!(LIBRARY_CONNECTION_FIELD in service)) {
    throw new OutboxTailError(
      'REPLICATION_STREAM_ERROR',
      `pg-logical-replication has no private ${LIBRARY_CONNECTION_FIELD} field any more: outbox-tail cannot pause the replication socket or send its own status updates with this version`,
      { hint: 'install the pg-logical-replication version pinned in package.json (npm ci)' },
    );
  }
  return (service as unknown as Record<typeof LIBRARY_CONNECTION_FIELD, ReplicationConnection | null>)[LIBRARY_CONNECTION_FIELD];
}
