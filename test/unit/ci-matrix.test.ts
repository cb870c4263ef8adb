import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The matrix .ci/run runs, as it prints it (`bash .ci/run --matrix`: no step runs). */
const printed = execFileSync('bash', ['.ci/run', '--matrix'], { cwd: ROOT, encoding: 'utf8' }).trim();
const AXES = ['PostgreSQL', 'Kafka', 'Node.js', 'stack', 'sink thread', 'source', 'delivery'] as const;
type Axis = (typeof AXES)[number];
const rows = printed
  .split('\n')
  .slice(2)
  .map((line) => {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    const entry = { name: cells[0]!, values: {} as Record<Axis, string[]> };
    AXES.forEach((axis, i) => (entry.values[axis] = cells[i + 1]!.split(',').map((v) => v.trim())));
    return entry;
  });
const has = (axis: Axis, value: RegExp) => (row: (typeof rows)[number]) => row.values[axis].some((v) => value.test(v));

describe('the CI matrix (.ci/run)', () => {
  it('covers every value of every axis at least once', () => {
    const want: Record<Axis, RegExp[]> = {
      PostgreSQL: [/^15\b/, /^17$/, /^18$/],
      Kafka: [/^3\.9\./, /^4\.1\./],
      'Node.js': [/^22\b/, /^24\b/],
      stack: [/^native$/, /^testcontainers$/],
      'sink thread': [/^main$/, /^worker$/],
      source: [/^table$/, /^messages$/],
      delivery: [/^at-least-once$/, /^exactly-once$/],
    };
    const missing = AXES.flatMap((axis) => want[axis].filter((v) => !rows.some(has(axis, v))).map((v) => `${axis} ${v}`));
    expect(missing).toEqual([]);
  });

  it('keeps the pairs that interact in one entry: exactly-once with each Kafka, messages with PostgreSQL 15 and 18, the sink thread with exactly-once', () => {
    const pairs: Array<[Axis, RegExp, Axis, RegExp]> = [
      ['delivery', /^exactly-once$/, 'Kafka', /^3\.9\./],
      ['delivery', /^exactly-once$/, 'Kafka', /^4\.1\./],
      ['source', /^messages$/, 'PostgreSQL', /^15\b/],
      ['source', /^messages$/, 'PostgreSQL', /^18$/],
      ['sink thread', /^worker$/, 'delivery', /^exactly-once$/],
    ];
    const apart = pairs.filter(([a, va, b, vb]) => !rows.some((r) => has(a, va)(r) && has(b, vb)(r))).map((p) => p.join(' '));
    expect(apart).toEqual([]);
  });

  it('is the table docs/testing.md shows', () => {
    const page = readFileSync(`${ROOT}docs/testing.md`, 'utf8');
    const block = /<!-- ci-matrix:begin -->\n([\s\S]*?)\n<!-- ci-matrix:end -->/.exec(page);
    expect(block, 'docs/testing.md has no <!-- ci-matrix:begin --> ... <!-- ci-matrix:end --> block').not.toBeNull();
    expect(block![1]!.trim()).toBe(printed);
  });

  it('runs exactly the Node.js, PostgreSQL and Kafka versions the README lists as supported', () => {
    const readme = readFileSync(`${ROOT}README.md`, 'utf8');
    const block = /<!-- supported-versions:begin -->\n([\s\S]*?)\n<!-- supported-versions:end -->/.exec(readme);
    expect(block, 'README.md has no <!-- supported-versions:begin --> ... <!-- supported-versions:end --> block').not.toBeNull();
    const supported = new Map(
      block![1]!
        .split('\n')
        .slice(2)
        .map((line) => line.split('|').map((c) => c.trim()))
        .map((cells) => [cells[1]!, cells[2]!.split(',').map((v) => v.trim())] as const),
    );
    // The version a matrix cell names, without what it adds ("15 (native)", "24 (image)").
    const ran = (axis: Axis) => [...new Set(rows.flatMap((r) => r.values[axis]).map((v) => v.replace(/\s*\(.*\)$/, '')))].sort();
    const listed = (component: string) => [...(supported.get(component) ?? [])].sort();
    expect({ 'Node.js': listed('Node.js'), PostgreSQL: listed('PostgreSQL'), Kafka: listed('Kafka') }).toEqual({
      'Node.js': ran('Node.js'),
      PostgreSQL: ran('PostgreSQL'),
      Kafka: ran('Kafka'),
    });
  });
});
