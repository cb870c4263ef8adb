/**
 * Checks that outbox-tail and a peer (Debezium Server, or Conduit with
 * --compare conduit) put the same bytes in Kafka for the same outbox rows
 * (issue 16: a fair comparison relays the same records): both catch-ups
 * publish the same backlog to the same topic, and each row's two copies are
 * compared. A copy is outbox-tail's when it carries the commit_lsn header,
 * which neither peer has a column for.
 *
 * Debezium's copies carry the outbox id as a header, as ours do, and are
 * paired by it. Conduit's Kafka destination (v0.12.3) writes no headers at
 * all, so its copies are paired with ours by the row's identity inside the
 * payload instead: the bench's payload carries orderId, the row's number in
 * the backlog (PAYLOAD_SQL in dev/bench/bench-db.ts), unique per backlog. A
 * value that is not that JSON pairs with nothing and counts as unpaired.
 */
import type { Kafka } from 'kafkajs';
import { consumeTopic } from '../bench-kafka.js';

interface Copy {
  key: string;
  value: string;
  partition: number;
  headers: Record<string, string>;
}

interface Side {
  records: number;
  header_names: string[];
  mean_key_bytes: number;
  mean_value_bytes: number;
  /** Header names and values, as the record format counts them (varint lengths aside). */
  mean_header_bytes: number;
}

export interface RecordMatch {
  /** Rows found once from each relay. */
  pairs: number;
  /** Rows found from one relay only (should be 0). */
  unpaired: number;
  key_equal: number;
  value_equal: number;
  /** Same partition for both copies: both clients partition keys with murmur2. */
  same_partition: number;
  /** Per header name both send: how many pairs carry the same value. */
  header_values_equal: Record<string, number>;
  /** One pair's values for every header whose values differ somewhere (the peer's under its name). */
  header_value_examples: Record<string, { outbox_tail: string; debezium?: string; conduit?: string }>;
  outbox_tail: Side;
  /** The peer's side, under its name: one of the two. */
  debezium?: Side;
  conduit?: Side;
  /** Every id paired, with equal key and value bytes. */
  ok: boolean;
}

const headerText = (headers: Record<string, Buffer | string | (Buffer | string)[] | undefined> | undefined): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (v !== undefined) out[k] = (Array.isArray(v) ? v[0]! : v).toString();
  return out;
};

export type Peer = 'debezium' | 'conduit';

/** The payload's orderId (the row's number in the backlog) as a pairing key, or null when the value is not that JSON. */
function orderIdOf(value: string): string | null {
  try {
    const id = (JSON.parse(value) as { orderId?: unknown }).orderId;
    return typeof id === 'number' ? String(id) : null;
  } catch {
    return null;
  }
}

/** Reads `total` records of `topic` (both relays' copies) and compares them pair by pair. */
export async function matchRecords(kafka: Kafka, topic: string, total: number, peer: Peer = 'debezium'): Promise<RecordMatch> {
  const ours = new Map<string, Copy>();
  const theirs = new Map<string, Copy>();
  let unpairable = 0;
  await consumeTopic(
    kafka,
    topic,
    total,
    (m, partition) => {
      const headers = headerText(m.headers);
      const copy: Copy = { key: m.key?.toString() ?? '', value: m.value?.toString() ?? '', partition, headers };
      const row = peer === 'debezium' ? (headers.id ?? '') : orderIdOf(copy.value);
      // A copy with no orderId can pair with nothing: kept under a key of its own, so it counts as unpaired.
      (headers.commit_lsn !== undefined ? ours : theirs).set(row ?? `unpairable-${unpairable++}`, copy);
    },
    300_000,
  );
  const side = (copies: Map<string, Copy>): Side => {
    const names = new Set<string>();
    let key = 0;
    let value = 0;
    let header = 0;
    for (const c of copies.values()) {
      key += Buffer.byteLength(c.key);
      value += Buffer.byteLength(c.value);
      for (const [k, v] of Object.entries(c.headers)) {
        names.add(k);
        header += Buffer.byteLength(k) + Buffer.byteLength(v);
      }
    }
    const n = Math.max(1, copies.size);
    const mean = (x: number) => Math.round((x / n) * 10) / 10;
    return { records: copies.size, header_names: [...names], mean_key_bytes: mean(key), mean_value_bytes: mean(value), mean_header_bytes: mean(header) };
  };
  const out: RecordMatch = {
    pairs: 0,
    unpaired: 0,
    key_equal: 0,
    value_equal: 0,
    same_partition: 0,
    header_values_equal: {},
    header_value_examples: {},
    outbox_tail: side(ours),
    [peer]: side(theirs),
    ok: false,
  };
  const common = out.outbox_tail.header_names.filter((n) => out[peer]!.header_names.includes(n));
  for (const n of common) out.header_values_equal[n] = 0;
  for (const [id, a] of ours) {
    const b = theirs.get(id);
    if (!b) {
      out.unpaired++;
      continue;
    }
    out.pairs++;
    if (a.key === b.key) out.key_equal++;
    if (a.value === b.value) out.value_equal++;
    if (a.partition === b.partition) out.same_partition++;
    for (const n of common) {
      if (a.headers[n] === b.headers[n]) out.header_values_equal[n]!++;
      else out.header_value_examples[n] ??= { outbox_tail: a.headers[n] ?? '', [peer]: b.headers[n] ?? '' };
    }
  }
  for (const id of theirs.keys()) if (!ours.has(id)) out.unpaired++;
  out.ok = out.unpaired === 0 && out.pairs > 0 && out.key_equal === out.pairs && out.value_equal === out.pairs;
  return out;
}
