/**
 * npm run docs: writes docs/configuration.md and docs/metrics.md from the code.
 * npm run docs:check (part of npm run lint): writes nothing; exits 1 naming
 * every page that differs from what npm run docs would write.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { docsPages, ROOT, stalePages } from './docs-pages.js';

const check = process.argv.includes('--check');
const unknown = process.argv.slice(2).filter((arg) => arg !== '--check');
if (unknown.length > 0) {
  process.stderr.write(`generate-docs: unknown argument(s) ${unknown.join(' ')}; usage: generate-docs.ts [--check]\n`);
  process.exit(64);
}

const pages = docsPages();
if (check) {
  const stale = stalePages(pages, (path) => (existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), 'utf8') : null));
  if (stale.length > 0) {
    process.stderr.write(
      `docs: ${stale.join(', ')} ${stale.length === 1 ? 'is' : 'are'} stale: the code it is generated from changed. Run \`npm run docs\` and commit the result.\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`docs: ${pages.map((p) => p.path).join(', ')} up to date\n`);
} else {
  for (const page of pages) {
    const path = join(ROOT, page.path);
    const before = existsSync(path) ? readFileSync(path, 'utf8') : null;
    if (before !== page.content) writeFileSync(path, page.content);
    process.stdout.write(`docs: ${page.path} ${before === page.content ? 'unchanged' : 'written'}\n`);
  }
}
