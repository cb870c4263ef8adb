import { OutboxTailError } from '../errors/outbox-tail-error.js';
import type { PgoutputMessage } from '../replication/pgoutput-decoder.js';
import type { PipelineItem, Transaction } from './outbox-event.js';
import { splitTable } from './qualified-table.js';
import { isMalformed, type RowMapper } from './row-mapper.js';

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

  constructor(
    private readonly mapper: RowMapper,
    private readonly out: AssemblerSink,
  ) {
    [this.schema, this.name] = splitTable(mapper.table);
  }

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
        if (message.relationId !== this.outboxRelationId) return;
        const txn = this.current;
        if (!txn) throw protocol('INSERT outside a transaction');
        const row = this.mapper.map(message.values, txn);
        this.out.item(isMalformed(row) ? { kind: 'malformed', row } : { kind: 'event', event: row });
        return;
      }
      default:
        // Updates, deletes, truncates, origins, types and logical messages carry no outbox events.
        return;
    }
  }
}

function protocol(message: string): OutboxTailError {
  return new OutboxTailError('PROTOCOL_ERROR', `unexpected pgoutput sequence: ${message}`, { retriable: true });
}
