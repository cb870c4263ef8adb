import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The installed package's root (where migrations/ lives), from src/ or dist/src/. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'migrations'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('cannot find the outbox-tail package root (migrations/ folder)');
}
