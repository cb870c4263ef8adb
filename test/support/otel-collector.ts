import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../dev/stack/process.js';

const SETUP_SCRIPT = fileURLToPath(new URL('../../bin/setup-otelcol.sh', import.meta.url));

/** How long the tracing test waits for a collector build running beside it (CI builds it in the background, .ci/run). */
export const OTELCOL_BUILD_WAIT_MS = 20 * 60_000;

/**
 * The binary's path once it is there. When a build is running (CI starts one in the background at the start of its
 * run), waits for it (bin/setup-otelcol.sh --wait); never starts a build of its own. Rejects, naming the command that
 * builds it, when there is no binary and no build: a missing tool fails the test, never skips it.
 */
export async function otelcolReady(): Promise<string> {
  const fromEnv = process.env.OUTBOX_TAIL_OTELCOL_BIN;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`OUTBOX_TAIL_OTELCOL_BIN=${fromEnv} does not exist`);
    return fromEnv;
  }
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile('bash', [SETUP_SCRIPT, '--wait'], { timeout: OTELCOL_BUILD_WAIT_MS }, (error, out, stderr) => {
      if (!error) return resolve(out);
      reject(new Error(`the OTLP collector is not built: run npm run setup:tools (bin/setup-otelcol.sh); bin/setup-otelcol.sh --wait said:\n${stderr}`));
    }),
  );
  const binary = stdout.trim().split('\n').at(-1) ?? '';
  if (!existsSync(binary)) throw new Error(`bin/setup-otelcol.sh --wait printed ${binary}, which does not exist`);
  return binary;
}

/** A span as the collector forwarded it (OTLP/JSON: ids in lower-case hex, no parent as ''). */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** The resource's service.name. */
  service: string;
}

interface OtlpJsonTraces {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value?: { stringValue?: string } }> };
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string }> }>;
  }>;
}

export interface OtelCollector {
  /** OTLP over HTTP: OTEL_EXPORTER_OTLP_ENDPOINT. */
  otlpHttp: string;
  /** Every span the collector's receiver decoded and its exporter forwarded so far. */
  spans(): CollectedSpan[];
  stop(): Promise<void>;
}

/**
 * The OpenTelemetry Collector built from dev/otelcol on free loopback ports: its OTLP receiver takes what the relay
 * and the application export (OTLP/protobuf over HTTP), and its OTLP/HTTP exporter forwards what the receiver
 * decoded, as OTLP/JSON, to an HTTP endpoint in this process, where the test reads the spans.
 */
export async function startOtelCollector(binary: string): Promise<OtelCollector> {
  const collected: CollectedSpan[] = [];
  const sink: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpJsonTraces;
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue ?? '';
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              collected.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, service });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        res.writeHead(400).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkPort = (sink.address() as { port: number }).port;
  const otlp = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'outbox-tail-otelcol-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlp}
exporters:
  otlp_http:
    endpoint: http://127.0.0.1:${sinkPort}
    encoding: json
    compression: none
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlp_http]
  telemetry:
    metrics:
      level: none
`,
  );
  const child = spawn(binary, ['--config', `file:${config}`], { stdio: ['ignore', 'pipe', 'pipe'] });
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
    await new Promise<void>((resolve) => sink.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  };
  // Ready when the receiver accepts an empty export request.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`the OTLP collector exited with ${child.exitCode}:\n${output.slice(-3000)}`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${otlp}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the OTLP collector did not answer on its receiver within 60 s:\n${output.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { otlpHttp: `http://127.0.0.1:${otlp}`, spans: () => [...collected], stop };
}
