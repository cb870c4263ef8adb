import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The version bin/setup-jaeger.sh builds; the binary lives in its cache directory. */
const JAEGER_VERSION = '1.75.0';

export function jaegerBinary(): string {
  return (
    process.env.OUTBOX_TAIL_JAEGER_BIN ??
    join(process.env.OUTBOX_TAIL_CACHE_DIR ?? join(homedir(), '.cache', 'outbox-tail'), `jaeger-${JAEGER_VERSION}`, 'bin', 'jaeger')
  );
}

/** How long the tracing test waits for a Jaeger build running beside it (CI builds it in the background, .ci/run). */
export const JAEGER_BUILD_WAIT_MS = 20 * 60_000;

/**
 * Resolves when the binary is there. When a build is running (CI starts one in the background at the start of its
 * run), waits for it to finish (bin/setup-jaeger.sh --wait); never starts a build of its own. Rejects, naming the
 * command that builds it, when there is no binary and no build: a missing tool fails the test, never skips it.
 */
export async function jaegerReady(): Promise<void> {
  if (process.env.OUTBOX_TAIL_JAEGER_BIN) {
    if (!existsSync(jaegerBinary())) throw new Error(`OUTBOX_TAIL_JAEGER_BIN=${jaegerBinary()} does not exist`);
    return;
  }
  const script = fileURLToPath(new URL('../../bin/setup-jaeger.sh', import.meta.url));
  await new Promise<void>((resolve, reject) =>
    execFile('bash', [script, '--wait'], { timeout: JAEGER_BUILD_WAIT_MS }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      reject(
        new Error(`${jaegerBinary()} is missing: run npm run setup:tools (bin/setup-jaeger.sh builds Jaeger v2); bin/setup-jaeger.sh --wait said:\n${stderr}`),
      );
    }),
  );
  if (!existsSync(jaegerBinary())) throw new Error(`bin/setup-jaeger.sh --wait succeeded but ${jaegerBinary()} is missing`);
}

export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Jaeger {
  /** OTLP over HTTP: OTEL_EXPORTER_OTLP_ENDPOINT. */
  otlpHttp: string;
  /** The query API (GET /api/traces/{traceId}). */
  query: string;
  stop(): Promise<void>;
}

/**
 * Jaeger v2 (an OpenTelemetry Collector distribution) with in-memory storage,
 * on free loopback ports: an OTLP/HTTP receiver and the query API.
 */
export async function startJaeger(): Promise<Jaeger> {
  const [otlp, query, queryGrpc] = [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()];
  const dir = mkdtempSync(join(tmpdir(), 'outbox-tail-jaeger-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${query}
    grpc:
      endpoint: 127.0.0.1:${queryGrpc}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlp}
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`,
  );
  const child = spawn(jaegerBinary(), ['--config', `file:${config}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`jaeger exited with ${child.exitCode}:\n${output.slice(-3000)}`);
    try {
      const res = await fetch(`http://127.0.0.1:${query}/api/services`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`jaeger did not answer on its query port within 60 s:\n${output.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { otlpHttp: `http://127.0.0.1:${otlp}`, query: `http://127.0.0.1:${query}`, stop };
}

/** The spans of a trace as Jaeger's query API returns them (operationName, the service, the parent's span id). */
export interface JaegerSpan {
  spanId: string;
  operationName: string;
  service: string;
  parentSpanId: string | undefined;
}

export async function jaegerTrace(jaeger: Jaeger, traceId: string): Promise<JaegerSpan[]> {
  const res = await fetch(`${jaeger.query}/api/traces/${traceId}`);
  if (res.status === 404) return [];
  if (!res.ok) throw new Error(`GET /api/traces/${traceId}: HTTP ${res.status}`);
  const body = (await res.json()) as {
    data: Array<{
      spans: Array<{ spanID: string; operationName: string; processID: string; references?: Array<{ refType: string; spanID: string }> }>;
      processes: Record<string, { serviceName: string }>;
    }>;
  };
  return (body.data ?? []).flatMap((t) =>
    t.spans.map((s) => ({
      spanId: s.spanID,
      operationName: s.operationName,
      service: t.processes[s.processID]?.serviceName ?? '',
      parentSpanId: s.references?.find((r) => r.refType === 'CHILD_OF')?.spanID,
    })),
  );
}
