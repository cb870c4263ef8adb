import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { kafkajsLogCreator } from '../../../src/kafka/kafkajs/kafkajs-log-creator.js';
import { createLogger } from '../../../src/shared/create-logger.js';
import { carriesCredentials, redactText, redactUrl } from '../../../src/shared/redact-secrets.js';
import { PassThrough } from 'node:stream';
import { redactUrl as stackRedactUrl } from '../../../dev/stack/index.js';
import { captureLogs } from '../../support/log-capture.js';

describe('redactUrl (the one copy: config redaction and the stack use it)', () => {
  it('masks the password of a URL and keeps host and database', () => {
    expect(redactUrl('postgresql://app:s3cret@db:5432/x')).toBe('postgresql://app:***@db:5432/x');
    expect(redactUrl('postgresql://postgres@127.0.0.1:5432/x')).toBe('postgresql://postgres@127.0.0.1:5432/x');
  });

  it('masks user:password@ in text that is not a URL, and hides anything else whole', () => {
    expect(redactUrl('postgres://u:p@ss@host:notaport/db')).toBe('postgres://u:***@host:notaport/db');
    expect(redactUrl('host=db password=s3cret')).toBe('***');
  });

  it('masks the password and sslpassword query parameters pg honours', () => {
    expect(redactUrl('postgres://u@db/x?sslmode=require&password=s3cret')).toBe('postgres://u@db/x?sslmode=require&password=***');
    expect(redactUrl('postgres://u@db/x?sslpassword=s3cret')).toBe('postgres://u@db/x?sslpassword=***');
  });

  it('hides a URL typed without its scheme whole, as it cannot be read for sure', () => {
    expect(redactUrl('u:s3cret@db/x')).not.toContain('s3cret');
  });

  it('is the function the stack exports', () => {
    expect(stackRedactUrl).toBe(redactUrl);
  });
});

describe('redactText (every exit: logs, errors, warnings, command output)', () => {
  it.each([
    ['a URL with a password in free text', 'cannot connect to postgres://app:s3cret@db:5432/x now'],
    ['a raw @ in the password', 'at postgresql://app:s3@cret@db/x'],
    ['a ?password= query parameter', 'url postgres://app@db/x?password=s3cret&a=b'],
    ['an sslpassword= parameter inside JSON', '{"url":"postgres://db/x?sslpassword=s3cret"}'],
    ['a keyword/value string', "host=db password='s3 cret' user=u"],
    ['user:password@host without a scheme', 'cannot connect to PostgreSQL at localhost:5432s3cret@db/x'],
  ])('masks %s', (_form, text) => {
    expect(redactText(text)).not.toMatch(/s3/);
    expect(carriesCredentials(text)).toBe(true);
  });

  it('leaves text without credentials alone', () => {
    for (const text of ['postgres://u@db:5432/x?sslmode=require', 'user@example.com', '2026-12-07T14:15:34.460Z', 'host=db user=u'])
      expect(redactText(text)).toBe(text);
  });

  it('masks a credential in every log line, whatever field carries it', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const logger = createLogger('info', out);
    logger.error({ err: new Error('at postgres://u:s3cret@db/x') }, 'failed with ?password=s3cret');
    await new Promise((resolve) => setImmediate(resolve));
    expect(text).toContain('failed with');
    expect(text).not.toContain('s3cret');
  });
});

describe('kafkajsLogCreator', () => {
  const entry = (message: string) => ({ namespace: 'Producer', label: 'x', log: { message, timestamp: 't', logger: 'kafkajs', broker: 'b:9092' } });

  it('maps levels, keeps the fields, names the namespace, and downgrades intended warnings to debug', () => {
    const { lines, logger } = captureLogs('debug');
    const log = kafkajsLogCreator(logger, new Set(['on purpose']))(logLevel.DEBUG);
    log({ ...entry('boom'), level: logLevel.ERROR });
    log({ ...entry('careful'), level: logLevel.WARN });
    log({ ...entry('on purpose'), level: logLevel.WARN });
    log({ ...entry('chatty'), level: logLevel.INFO });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['error', 'boom'],
      ['warn', 'careful'],
      ['debug', 'on purpose'],
      ['debug', 'chatty'],
    ]);
    const errors = captureLogs('debug');
    const quiet = kafkajsLogCreator(errors.logger, new Set(), new Set(['normal retry']))(logLevel.DEBUG);
    quiet({ ...entry('normal retry'), level: logLevel.ERROR });
    quiet({ ...entry('real failure'), level: logLevel.ERROR });
    // The same retry as the `error` of kafkajs's Connection response line.
    quiet({
      ...entry('Response AddPartitionsToTxn(key: 24, version: 1)'),
      level: logLevel.ERROR,
      log: { ...entry('Response AddPartitionsToTxn(key: 24, version: 1)').log, error: 'normal retry' },
    });
    quiet({
      ...entry('Response AddPartitionsToTxn(key: 24, version: 1)'),
      level: logLevel.ERROR,
      log: { ...entry('Response AddPartitionsToTxn(key: 24, version: 1)').log, error: 'Not authorized' },
    });
    expect(errors.lines.map((l) => [l.level, l.msg])).toEqual([
      ['debug', 'normal retry'],
      ['error', 'real failure'],
      ['debug', 'Response AddPartitionsToTxn(key: 24, version: 1)'],
      ['error', 'Response AddPartitionsToTxn(key: 24, version: 1)'],
    ]);
    expect(lines[0]).toMatchObject({ kafkajs: 'Producer', broker: 'b:9092' });
    expect(lines[0]).not.toHaveProperty('timestamp');
  });
});
