/**
 * docs/architecture.md's floor table and the README's pipeline line name what
 * the code has: the floors are the rules lint enforces, and every folder named
 * exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

interface Rule {
  name: string;
  from: { path: string };
}

/** The folders of each floor rule of .dependency-cruiser.cjs, lowest floor first. */
function floorsFromLint(): string[][] {
  const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: Rule[] };
  return config.forbidden
    .filter((rule) => /^floor-.*-not-up$/.test(rule.name))
    .map((rule) =>
      /^\^src\/\((.*)\)\(\/\|\$\)$/
        .exec(rule.from.path)![1]!
        .split('|')
        .map((name) => name.replace('\\.', '.')),
    )
    .reverse();
}

/** The folders of each floor of the docs' table, lowest floor first, without the top one (it imports, nothing imports it). */
function floorsFromDocs(): { floor: number; folders: string[] }[] {
  const section = read('docs/architecture.md').split('## Floor plan')[1]!.split('\n## ')[0]!;
  return section
    .split('\n')
    .map((line) => /^\| (\d+) \| ([^|]+) \|/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ floor: Number(m[1]), folders: [...m[2]!.matchAll(/`([^`]+?)\/?`/g)].map((f) => f[1]!) }))
    .sort((a, b) => a.floor - b.floor);
}

describe('the architecture as the docs draw it', () => {
  it("docs/architecture.md's floor table is the floors lint enforces, floor by floor", () => {
    const docs = floorsFromDocs();
    const lint = floorsFromLint();
    expect(docs.map((d) => d.floor)).toEqual(docs.map((_, i) => i + 1));
    expect(docs.slice(0, -1).map((d) => d.folders)).toEqual(lint);
  });

  it('every folder of the floor table exists under src/', () => {
    const missing = floorsFromDocs()
      .flatMap((d) => d.folders)
      .filter((folder) => !existsSync(join(ROOT, 'src', folder)));
    expect(missing).toEqual([]);
  });

  it("the README's pipeline line names folders that exist", () => {
    const block = read('README.md').split('```')[1]!;
    const named = [...block.matchAll(/src\/([\w/-]+)\/(?:\{([^}]+)\}\/)?/g)].flatMap((m) =>
      m[2] ? m[2].split(',').map((sub) => `src/${m[1]}/${sub}`) : [`src/${m[1]}`],
    );
    expect(named.length).toBeGreaterThanOrEqual(6);
    expect(named.filter((folder) => !existsSync(join(ROOT, folder)))).toEqual([]);
  });
});
