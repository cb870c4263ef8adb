import { describe, expect, it } from 'vitest';
import { MessageContent, type MessageEnvelope, type ParsedMessageContent, type UnparsableContent } from '../../../../src/pipeline/assemble/message-content.js';
import { type PgoutputMessage } from '../../../../src/pipeline/decode/pgoutput-decoder.js';
import { decodeRecorded, loadRecorded } from '../../../support/pgoutput-fixtures.js';

// The envelope rules of message content v1 (src/pipeline/assemble/message-content.ts), one
// rule per test: what a writer must send, what the relay refuses and with which
// reason (the reason is what --on-malformed reports to the operator).

const recorded = loadRecorded('pgoutput-recorded-messages');
const recordedMessage = (scenario: string, index: number) => {
  const message = decodeRecorded(recorded, scenario, index);
  if (message.tag !== 'message') throw new Error(`${scenario}[${index}] is a ${message.tag}, not a message`);
  return message as Extract<PgoutputMessage, { tag: 'message' }>;
};

const ENVELOPE = '"v":1,"id":"e1","aggregate_type":"order","aggregate_id":"o-1","event_type":"created"';
/** A v1 content whose envelope has the four required fields plus `extra` (JSON members, comma first). */
const content = (extra = '', payload = '{}') => Buffer.from(`{${ENVELOPE}${extra}}\n${payload}`);
const parsed = (bytes: Buffer): ParsedMessageContent => {
  const result = MessageContent.parse(bytes);
  if ('reason' in result) throw new Error(`refused: ${result.reason}`);
  return result;
};
const refused = (bytes: Buffer | string): UnparsableContent => {
  const result = MessageContent.parse(typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
  if (!('reason' in result)) throw new Error(`parsed: ${JSON.stringify(result.envelope)}`);
  return result;
};

describe('MessageContent.encode', () => {
  it('writes byte for byte the compact v1 content a hand-written message carries: no headers and no created_at as null', () => {
    const raw = recordedMessage('row_then_emit_then_raw_message_one_txn', 4);
    const envelope: MessageEnvelope = {
      id: '00000000-0000-0000-0000-000000000003',
      aggregateType: 'order',
      aggregateId: 'o-1',
      eventType: 'shipped',
      headers: {},
      createdAt: null,
    };
    expect(MessageContent.encode(envelope, '{ "kept" :  "as written" }').toString('utf8')).toBe(raw.content.toString('utf8'));
  });

  it('writes headers and created_at when there are some, and a payload given as bytes or as text, UTF-8', () => {
    const envelope: MessageEnvelope = {
      id: 'e1',
      aggregateType: 'order',
      aggregateId: 'o-1',
      eventType: 'created',
      headers: { trace: 't-1' },
      createdAt: '2026-12-04T00:00:00Z',
    };
    const expected = `{"v":1,"id":"e1","aggregate_type":"order","aggregate_id":"o-1","event_type":"created","headers":{"trace":"t-1"},"created_at":"2026-12-04T00:00:00Z"}\n{"ü":"☕"}`;
    expect(MessageContent.encode(envelope, '{"ü":"☕"}').equals(Buffer.from(expected, 'utf8'))).toBe(true);
    expect(MessageContent.encode(envelope, Buffer.from('{"ü":"☕"}', 'utf8')).equals(Buffer.from(expected, 'utf8'))).toBe(true);
  });

  it('round-trips through parse: the envelope as given, the payload bytes untouched', () => {
    const envelope: MessageEnvelope = { id: 'e1', aggregateType: 'a', aggregateId: 'k', eventType: 't', headers: {}, createdAt: null };
    const payload = Buffer.from('[1, 2.50, "\\n"]');
    const result = parsed(MessageContent.encode(envelope, payload));
    expect(result.envelope).toEqual(envelope);
    expect(result.payload.equals(payload)).toBe(true);
  });
});

describe('MessageContent.parse: the envelope line', () => {
  it('refuses an empty envelope line as invalid JSON, not as a missing newline: the newline is there', () => {
    expect(refused('\n{}')).toEqual({ id: null, reason: 'envelope is not valid JSON' });
  });

  it.each([
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"e1"'],
    ['a boolean', 'true'],
    ['an array', '[{"v":1}]'],
  ])('refuses an envelope that is %s: it must be a JSON object', (_what, envelope) => {
    expect(refused(`${envelope}\n{}`)).toEqual({ id: null, reason: 'envelope is not a JSON object' });
  });

  it('names the id of an envelope sent without its payload line, when the id is a non-empty string', () => {
    expect(refused('{"v":1,"id":"e1"}')).toEqual({ id: 'e1', reason: 'no newline after the envelope' });
    for (const unreadable of ['{"v":1,"id":""}', '{"v":1,"id":5}', '{"v":1}', 'null', '42', '"e1"', '["e1"]', '{"v":1,"id":"e1"'])
      expect(refused(unreadable), unreadable).toEqual({ id: null, reason: 'no newline after the envelope' });
  });
});

describe('MessageContent.parse: the envelope fields', () => {
  it('treats an empty id as missing, and names no id in the refusal', () => {
    expect(refused('{"v":1,"id":"","aggregate_type":"a","aggregate_id":"b","event_type":"c"}\n{}')).toEqual({
      id: null,
      reason: 'field(s) id missing or not a non-empty string',
    });
  });

  it('names every required field that is absent, empty or not a string, in envelope order', () => {
    expect(refused('{"v":1,"id":"x","aggregate_type":7,"aggregate_id":null,"event_type":["c"]}\n{}')).toEqual({
      id: 'x',
      reason: 'field(s) aggregate_type, aggregate_id, event_type missing or not a non-empty string',
    });
  });

  it.each([
    ['a string', '"trace=t-1"', 'string'],
    ['a number', '5', 'number'],
    ['a boolean', 'true', 'boolean'],
    ['an array', '["t-1"]', 'an array'],
  ])('refuses headers that are %s, naming what it got', (_what, headers, got) => {
    expect(refused(content(`,"headers":${headers}`))).toEqual({ id: 'e1', reason: `headers must be a JSON object, got ${got}` });
  });

  it("keeps the string headers only, as from the table's headers column", () => {
    const headers = '{"trace":"t-1","n":2,"flag":true,"nested":{"a":"b"},"none":null,"empty":""}';
    expect(parsed(content(`,"headers":${headers}`)).envelope.headers).toEqual({ trace: 't-1', empty: '' });
  });

  it('reads absent or null headers as none, and absent or null created_at as null', () => {
    for (const extra of ['', ',"headers":null,"created_at":null']) {
      const { envelope } = parsed(content(extra));
      expect(envelope.headers).toEqual({});
      expect(envelope.createdAt).toBeNull();
    }
    expect(parsed(content(',"created_at":"2026-12-04T00:00:00Z"')).envelope.createdAt).toBe('2026-12-04T00:00:00Z');
  });

  it('refuses a created_at that is not a string', () => {
    expect(refused(content(',"created_at":1764806400'))).toEqual({ id: 'e1', reason: 'created_at must be a string' });
  });
});

describe('MessageContent.parse: the payload', () => {
  it.each(['{}', '[]', '"text"', '42', 'null', '{"a": [1, 2.50]}'])('accepts any JSON value as the payload, as a jsonb column would hold: %s', (payload) => {
    expect(parsed(content('', payload)).payload.toString('utf8')).toBe(payload);
  });

  it('refuses a payload that is not JSON, naming the id', () => {
    expect(refused(content('', "{'single': 'quotes'}"))).toEqual({ id: 'e1', reason: 'payload is not valid JSON' });
  });
});
