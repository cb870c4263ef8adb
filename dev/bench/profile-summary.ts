/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by
 * package/file, so a benchmark run's profile can be read without DevTools.
 *
 *   node --import tsx dev/bench/profile-summary.ts <file.cpuprofile> [--top 30]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  gcMs: number;
  byFunction: Array<{ name: string; where: string; ms: number; pct: number }>;
  byModule: Array<{ module: string; ms: number; pct: number }>;
}

function moduleOf(url: string): string {
  if (!url) return '(native/vm)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const m = /\/(src|dist\/src|test)\/(.*)$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : url;
}

export function summarise(profile: Profile, top = 30): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let total = 0;
  let idle = 0;
  let gc = 0;
  const fn = new Map<string, { name: string; where: string; us: number }>();
  const mod = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    total += us;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    if (functionName === '(garbage collector)') gc += us;
    const name = functionName || '(anonymous)';
    const where = url ? `${moduleOf(url)}:${lineNumber + 1}` : '';
    const key = `${name}@${where}`;
    const entry = fn.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    fn.set(key, entry);
    const m = url ? moduleOf(url) : name.startsWith('(') ? name : '(native/vm)';
    mod.set(m, (mod.get(m) ?? 0) + us);
  }
  const busy = total - idle;
  const pct = (us: number) => Math.round((1000 * us) / busy) / 10;
  return {
    totalMs: Math.round(total / 1000),
    idleMs: Math.round(idle / 1000),
    gcMs: Math.round(gc / 1000),
    byFunction: [...fn.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, ms: Math.round(f.us / 1000), pct: pct(f.us) })),
    byModule: [...mod.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([module, us]) => ({ module, ms: Math.round(us / 1000), pct: pct(us) })),
  };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '30' } }, allowPositionals: true });
  for (const file of positionals) {
    const s = summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(values.top));
    const busy = s.totalMs - s.idleMs;
    process.stdout.write(
      `\n${file}\n  wall ${s.totalMs} ms, busy ${busy} ms, idle ${s.idleMs} ms, GC ${s.gcMs} ms (${Math.round((100 * s.gcMs) / busy)}% of busy)\n`,
    );
    process.stdout.write('  self time by module:\n');
    for (const m of s.byModule) process.stdout.write(`    ${String(m.pct).padStart(5)}%  ${String(m.ms).padStart(6)} ms  ${m.module}\n`);
    process.stdout.write('  self time by function:\n');
    for (const f of s.byFunction) process.stdout.write(`    ${String(f.pct).padStart(5)}%  ${String(f.ms).padStart(6)} ms  ${f.name}  ${f.where}\n`);
  }
}
