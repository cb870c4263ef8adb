/**
 * `npm run bench -- --relay-node 24,/usr/bin/node [...]` or
 * `--kafka-client kafkajs,platformatic` or `--compression none,gzip,snappy,lz4,zstd`:
 * the whole bench once per value of that axis (the relay's Node.js runtime, its
 * Kafka client, or its codec), one after the other
 * on one stack (started here unless --database-url/--brokers name one), each in
 * a bench process of its own with the flag set to that value alone. The JSON
 * object has every value's result under `runtimes` (or `kafka_clients`), and
 * (`compressions`) and under `ratios` each headline figure divided by the first value's.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { startStack, type StackHandle } from '../stack/index.js';
import { ROOT } from './bench-process.js';

interface Options {
  /** The flag compared, and its values in the order they run. */
  axis: 'relay-node' | 'kafka-client' | 'compression';
  values: string[];
  /** This bench's own arguments, to pass on. */
  argv: string[];
  flags: { json?: boolean; 'json-out'?: string; 'database-url'?: string; brokers?: string };
  log: (line: string) => void;
}

/** Drops `--name value` / `--name=value` pairs. */
function without(argv: string[], names: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = names.find((n) => a === `--${n}` || a.startsWith(`--${n}=`));
    if (name === undefined) out.push(a);
    else if (a === `--${name}` && name !== 'json') i++;
  }
  return out;
}

function runOnce(args: string[], log: (line: string) => void): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `${ROOT}dev/bench/run-bench.ts`, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0) return reject(new Error(`bench with ${args.join(' ')} exited ${code}`));
      try {
        resolve(JSON.parse(last) as Record<string, unknown>);
      } catch {
        log(out.slice(-2000));
        reject(new Error('the bench printed no JSON object on its last line'));
      }
    });
  });
}

/** The figures worth a ratio, as paths into a bench result. */
const HEADLINES = [
  'catchup.events_per_sec',
  'catchup.cpu.us_per_event.relay',
  'catchup.peak_rss_mb',
  'catchup.broker_bytes_per_event',
  'catchup_batched.events_per_sec',
  'big_txn.seconds',
  'big_txn.peak_rss_mb',
  'steady.0.p50_ms',
  'steady.0.p99_ms',
  'steady.1.p50_ms',
  'steady.1.p99_ms',
];

/** The number at `path` (dots; array indexes as numbers), or undefined. */
function pick(result: unknown, path: string): number | undefined {
  let v: unknown = result;
  for (const key of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return typeof v === 'number' ? v : undefined;
}

export async function compareVariants(o: Options): Promise<void> {
  let stack: StackHandle | null = null;
  let url = o.flags['database-url'];
  let brokers = o.flags.brokers;
  if (!url || !brokers) {
    o.log(`starting one local stack for every ${o.axis} value`);
    stack = await startStack({ log: (l) => o.log(`  ${l}`) });
    url = stack.databaseUrl;
    brokers = stack.brokers.join(',');
  }
  const runtimes: Array<{ node: string; result: Record<string, unknown> }> = [];
  try {
    const base = without(o.argv, [o.axis, 'json', 'json-out', 'database-url', 'brokers']);
    for (const value of o.values) {
      o.log(`${o.axis} ${value}`);
      const result = await runOnce([...base, '--json', `--${o.axis}`, value, '--database-url', url, '--brokers', brokers], o.log);
      const label = o.axis === 'relay-node' ? (result.env as { relay_node?: string } | undefined)?.relay_node : undefined;
      runtimes.push({ node: String(label ?? value), result });
    }
  } finally {
    await stack?.stop().catch(() => undefined);
  }
  const first = runtimes[0]!.result;
  const ratios = runtimes.slice(1).map(({ node, result }) => ({
    node,
    against: runtimes[0]!.node,
    ...Object.fromEntries(
      HEADLINES.flatMap((name) => {
        const a = pick(first, name);
        const b = pick(result, name);
        return a && b !== undefined ? [[name, Math.round((b / a) * 1000) / 1000]] : [];
      }),
    ),
  }));
  const combined =
    o.axis === 'relay-node' ? { runtimes, ratios } : o.axis === 'kafka-client' ? { kafka_clients: runtimes, ratios } : { compressions: runtimes, ratios };
  const lines = [
    `${o.axis === 'relay-node' ? 'runtimes' : o.axis === 'kafka-client' ? 'Kafka clients' : 'codecs'} side by side (${runtimes.map((r) => r.node).join(' vs ')}), one stack, one after the other:`,
    `  ${'figure'.padEnd(34)} ${runtimes.map((r) => r.node.padStart(12)).join(' ')}`,
    ...HEADLINES.map((name) => `  ${name.padEnd(34)} ${runtimes.map((r) => String(pick(r.result, name) ?? '-').padStart(12)).join(' ')}`),
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
  if (o.flags['json-out']) writeFileSync(o.flags['json-out'], `${JSON.stringify(combined)}\n`);
  if (o.flags.json) process.stdout.write(`${JSON.stringify(combined)}\n`);
  else process.stdout.write(`${lines.join('\n')}\n`);
}
