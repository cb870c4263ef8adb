import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

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
      PostgreSQL: [/^15\b/, /^16\b/, /^17$/, /^18$/],
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

/** The words of a shell command line: single quotes as bash's ${*@Q} and package.json's scripts write them. */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : m[2]!));
}

/** What an entry's command passes to `vitest run` (npm scripts expanded), or null for a command that runs no vitest. */
function vitestArgs(command: string[], scripts: Record<string, string>): string[] | null {
  const [tool, verb, name] = command;
  const words = tool === 'npm' && verb === 'test' ? shellWords(scripts.test!) : tool === 'npm' && verb === 'run' ? shellWords(scripts[name!] ?? '') : command;
  const at = words.findIndex((w, i) => w === 'vitest' && words[i + 1] === 'run');
  return at < 0 ? null : words.slice(at + 2);
}

/** Every test file a vitest project would find (the projects' includes are test/<project>/**\/*.test.ts). */
function allTestFiles(): string[] {
  return (readdirSync(`${ROOT}test`, { recursive: true, encoding: 'utf8' }) as string[])
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/${f}`)
    .sort();
}

const listFiles = async (args: string[]): Promise<string[]> => {
  const { stdout } = await promisify(execFile)(process.execPath, [`${ROOT}node_modules/vitest/vitest.mjs`, 'list', '--filesOnly', ...args], {
    cwd: ROOT,
    maxBuffer: 1 << 24,
  });
  return [...stdout.matchAll(/^\[[^\]]+\] (\S+)$/gm)].map((m) => m[1]!);
};

describe('the CI entries run every test file', () => {
  it('every test file under test/ runs in at least one entry of .ci/run (and leaving one out is caught)', async () => {
    const scripts = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
    const commands = execFileSync('bash', ['.ci/run', '--commands'], { cwd: ROOT, encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((line) => {
        const [name, command] = line.split('\t') as [string, string];
        return { name, args: vitestArgs(shellWords(command), scripts) };
      });
    expect(commands.map((c) => c.name)).toEqual(rows.map((r) => r.name));
    // What vitest itself selects for each entry's arguments (projects, file filters), without running anything.
    const ran = await Promise.all(commands.map(async (c) => ({ name: c.name, files: c.args ? await listFiles(c.args) : [] })));
    const uncovered = (entries: typeof ran) => allTestFiles().filter((f) => !entries.some((e) => e.files.includes(f)));
    expect(allTestFiles().length).toBeGreaterThan(100);
    expect(uncovered(ran), 'test files that no CI entry runs: add them to an entry of .ci/run').toEqual([]);
    // The check can fail: without the PostgreSQL 18 entry, the file only it runs is reported.
    const withoutPg18 = ran.filter((e) => !/PG 18/.test(e.name));
    expect(withoutPg18.length).toBe(ran.length - 1);
    expect(uncovered(withoutPg18)).toContain('test/pg18/doctor-pg18.test.ts');
  });
});
