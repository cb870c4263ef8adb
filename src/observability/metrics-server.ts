import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HealthReport {
  /** /healthz: the process loop is alive and not stalled. */
  healthy: boolean;
  /** /readyz: streaming (a healthy standby is alive but not ready). */
  ready: boolean;
  state: string;
  reason: string | null;
}

export interface MetricsServer {
  /** host:port actually bound (port 0 resolves to the real port). */
  readonly address: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Splits "host:port" / "[v6]:port". */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(listen.trim());
  if (!m) throw new Error(`invalid listen address ${listen}: expected host:port`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid listen address ${listen}: port above 65535`);
  return { host: (m[1] ?? m[2])!, port };
}

/** True for addresses reachable only from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * GET /metrics (Prometheus text format from `registry`), /healthz and
 * /readyz (200 or 503 with a small JSON body saying why). node:http only:
 * nothing else is served, no request body is read.
 */
export async function startMetricsServer(options: { listen: string; registry: Registry; health: () => HealthReport }): Promise<MetricsServer> {
  const { host, port } = parseListen(options.listen);
  const server: Server = createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    try {
      if (path === '/metrics') {
        const body = await options.registry.metrics();
        res.writeHead(200, { 'content-type': options.registry.contentType }).end(req.method === 'HEAD' ? undefined : body);
      } else if (path === '/healthz' || path === '/readyz') {
        const h = options.health();
        const ok = path === '/healthz' ? h.healthy : h.ready;
        const body = JSON.stringify({
          status: ok ? 'ok' : path === '/healthz' ? 'unhealthy' : 'not ready',
          state: h.state,
          ...(h.reason ? { reason: h.reason } : {}),
        });
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : `${body}\n`);
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics, /healthz or /readyz\n');
      }
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`error: ${(error as Error).message}\n`);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    address: `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`,
    port: bound.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
