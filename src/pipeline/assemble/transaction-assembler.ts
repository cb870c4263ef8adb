import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import type { PgoutputMessage } from '../decode/pgoutput-decoder.js';
import { PgTimestamp } from '../../postgres/pg-timestamp.js';
import { mapMessage } from './message-mapper.js';
import { Lsn } from '../../shared/lsn.js';
import type { PipelineItem, Transaction } from '../outbox-event.js';
import { splitTable } from '../../postgres/qualified-table.js';
import { isMalformed, type RowMapper } from './row-mapper.js';

/** Where outbox events come from: INSERTs on the outbox table, logical decoding messages with our prefix, or both. */
export type EventSource = 'table' | 'messages' | 'both';

export interface AssemblerOptions {
  source: EventSource;
  /** Messages with any other prefix are not ours and are ignored. */
  messagePrefix: string;
  /** Seam for the negative controls: a deliberately wrong mapping (test/support/broken-message-mapper.ts). */
  mapMessage?: MessageMapper;
}

export type MessageMapper = typeof mapMessage;

export interface AssemblerSink {
  begin(txn: Transaction): void;
  item(item: PipelineItem): void;
  commit(txn: Transaction): void;
}

/**
 * Turns the Begin..Commit message stream into transactions and their outbox
 * events, in commit order. Events are emitted as they are decoded, not
 * buffered until Commit, so a 100k-row transaction never sits whole in memory.
 */
export class TransactionAssembler {
  private current: Transaction | null = null;
  private seq = 0;
  private outboxRelationId: number | null = null;
  private readonly schema: string;
  private readonly name: string;
  private readonly rows: boolean;
  private readonly messages: boolean;
  private readonly mapMessage: MessageMapper;

  constructor(
    private readonly mapper: RowMapper,
    private readonly out: AssemblerSink,
    private readonly options: AssemblerOptions,
  ) {
    [this.schema, this.name] = splitTable(mapper.table);
    this.rows = options.source !== 'messages';
    this.messages = options.source !== 'table';
    this.mapMessage = options.mapMessage ?? mapMessage;
  }

  private nonTransactional(message: Extract<PgoutputMessage, { tag: 'message' }>): void {
    if (this.current) throw protocol(`non-transactional message at ${Lsn.format(message.lsn)} inside xid ${this.current.xid}`);
    const txn = nonTransactionalTxn(++this.seq, message.lsn);
    this.out.begin(txn);
    const row = this.mapMessage(message, txn);
    this.out.item(isMalformed(row) ? { kind: 'malformed', row } : { kind: 'event', event: row });
    txn.endLsn = message.lsn;
    this.out.commit(txn);
  }

  /** Updates, deletes, truncates, origins and types carry no outbox events: no case below, so push ignores them. */
  push(message: PgoutputMessage): void {
    switch (message.tag) {
      case 'begin': {
        if (this.current) throw protocol(`Begin of xid ${message.xid} while xid ${this.current.xid} is open`);
        this.current = {
          seq: ++this.seq,
          xid: message.xid,
          commitLsn: message.finalLsn,
          commitTime: message.commitTime,
          endLsn: null,
        };
        this.out.begin(this.current);
        return;
      }
      case 'commit': {
        const txn = this.current;
        if (!txn) throw protocol('Commit without Begin');
        if (txn.commitLsn !== message.commitLsn) {
          throw protocol(`Commit LSN ${message.commitLsn} differs from Begin's final LSN ${txn.commitLsn}`);
        }
        txn.endLsn = message.endLsn;
        this.current = null;
        this.out.commit(txn);
        return;
      }
      case 'relation':
        if (message.schema === this.schema && message.name === this.name) {
          this.outboxRelationId = message.relationId;
          this.mapper.onRelation(message.columns);
        }
        return;
      case 'insert': {
        if (!this.rows || message.relationId !== this.outboxRelationId) return;
        const txn = this.current;
        if (!txn) throw protocol('INSERT outside a transaction');
        const row = this.mapper.map(message.values, txn);
        this.out.item(isMalformed(row) ? { kind: 'malformed', row } : { kind: 'event', event: row });
        return;
      }
      case 'message': {
        if (!this.messages || message.prefix !== this.options.messagePrefix) return;
        if (message.transactional) {
          const txn = this.current;
          if (!txn) throw protocol(`transactional message at ${Lsn.format(message.lsn)} outside a transaction`);
          // In stream order with the transaction's rows: commit order and the commit end LSN come for free.
          const event = this.mapMessage(message, txn);
          this.out.item(isMalformed(event) ? { kind: 'malformed', row: event } : { kind: 'event', event });
          return;
        }
        this.nonTransactional(message);
        return;
      }
    }
  }
}

/**
 * pgoutput sends a non-transactional message at once, between transactions.
 * It is never published, but it must not vanish either: it becomes a
 * transaction of its own holding one malformed item, so --on-malformed halts
 * on it (nothing after it is confirmed) or dead-letters it, and the
 * checkpointer confirms past it only then. Its end LSN is the message's LSN
 * (the end of its WAL record): PostgreSQL skips it after a restart only when
 * the confirmed LSN is past its start, and every later commit record starts
 * at or after that end (docs/architecture.md#lsn-rules, rule 2).
 */
function nonTransactionalTxn(seq: number, lsn: Lsn): Transaction {
  return { seq, xid: 0, commitLsn: lsn, commitTime: PgTimestamp.fromUnixMs(Date.now()), endLsn: null };
}

function protocol(message: string): OutboxTailError {
  return new OutboxTailError('PROTOCOL_ERROR', `unexpected pgoutput sequence: ${message}`, { retriable: true });
}
