import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, run, sleep } from '../../dev/stack/process.js';

/**
 * A real Confluent-API-compatible schema registry for the tests: Apicurio
 * Registry, built from Maven Central by bin/setup-schema-registry.sh (cached),
 * run as a child java process on a free 127.0.0.1 port, its H2 database in a
 * file, so a stop() + start() keeps the registered schemas and their ids.
 */
export interface SchemaRegistryProcess {
  /** The Confluent-compatible API (…/apis/ccompat/v7). */
  readonly url: string;
  /** Apicurio's own API, which its Java serde speaks (…/apis/registry/v2). */
  readonly apicurioUrl: string;
  /** The directory of the Java reader's jars (Apicurio's Avro serde, kafka-clients). */
  readonly serdeLibDir: string;
  /** Milliseconds from spawn to the API answering, for the last start. */
  readonly startMs: number;
  start(): Promise<void>;
  /** The registry is down (its data stays on disk). */
  stop(): Promise<void>;
  dispose(): Promise<void>;
}

export async function setupSchemaRegistry(): Promise<{ runJar: string; serdeLibDir: string }> {
  const r = await run('bash', ['bin/setup-schema-registry.sh'], { timeoutMs: 1_200_000 });
  const runJar = /^APICURIO_RUN_JAR=(.+)$/m.exec(r.output)?.[1];
  const serdeLibDir = /^SERDE_CLASSPATH_DIR=(.+)$/m.exec(r.output)?.[1];
  if (r.code !== 0 || !runJar || !serdeLibDir) throw new Error(`bin/setup-schema-registry.sh failed (exit ${r.code}):\n${r.output.slice(-3000)}`);
  return { runJar, serdeLibDir };
}

export async function startSchemaRegistry(): Promise<SchemaRegistryProcess> {
  const { runJar, serdeLibDir } = await setupSchemaRegistry();
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'outbox-tail-registry-'));
  const base = `http://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  let startMs = 0;
  const handle: SchemaRegistryProcess = {
    url: `${base}/apis/ccompat/v7`,
    apicurioUrl: `${base}/apis/registry/v2`,
    serdeLibDir,
    get startMs() {
      return startMs;
    },
    async start() {
      const t0 = Date.now();
      const log = createWriteStream(join(dataDir, 'registry.log'), { flags: 'a' });
      child = spawn('java', ['-Xmx512m', '-XX:TieredStopAtLevel=1', '-jar', runJar], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          HTTP_PORT: String(port),
          QUARKUS_HTTP_HOST: '127.0.0.1',
          REGISTRY_DATASOURCE_URL: `jdbc:h2:file:${join(dataDir, 'registry')};DB_CLOSE_ON_EXIT=FALSE`,
          QUARKUS_LOG_LEVEL: 'WARN',
        },
      });
      child.stdout!.pipe(log);
      child.stderr!.pipe(log);
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      let gone = false;
      void exited.then(() => (gone = true));
      while (Date.now() - t0 < 180_000) {
        if (gone) throw new Error(`the schema registry exited during start; see ${join(dataDir, 'registry.log')}`);
        try {
          const r = await fetch(`${handle.url}/subjects`, { signal: AbortSignal.timeout(2_000) });
          if (r.ok) {
            startMs = Date.now() - t0;
            return;
          }
        } catch {
          // not listening yet
        }
        await sleep(250);
      }
      throw new Error(`the schema registry did not answer on ${handle.url} within 180 s; see ${join(dataDir, 'registry.log')}`);
    },
    async stop() {
      const c = child;
      child = null;
      if (!c || c.exitCode !== null) return;
      // SIGTERM: Quarkus closes the H2 database, so what was registered just before is on disk after a restart
      // (H2 writes with a delay, and a SIGKILL right after a registration lost it). SIGKILL if it lingers.
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
    async dispose() {
      await handle.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    await handle.start();
  } catch (error) {
    await handle.stop(); // its log stays for the error message
    throw error;
  }
  return handle;
}
