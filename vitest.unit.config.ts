import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The `unit` project of vitest.config.ts on its own, for tools that take a
// config file but no project filter (Stryker's vitest runner: `npm run mutate`).
// Pure tests: no servers, no global setup. Shared settings come from the base config.
type Project = { test?: { name?: string; include?: string[] } };
const { projects, ...shared } = base.test ?? {};
const unit = (projects as Project[] | undefined)?.find((p) => p.test?.name === 'unit');
if (!unit?.test?.include) throw new Error('vitest.config.ts has no `unit` project with an include list');

export default defineConfig({ test: { ...shared, include: unit.test.include } });
