import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { kafkajsLogCreator } from '../../../src/kafka/kafkajs/kafkajs-log-creator.js';
import { redactUrl } from '../../../src/shared/redact-url.js';
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

  it('is the function the stack exports', () => {
    expect(stackRedactUrl).toBe(redactUrl);
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
