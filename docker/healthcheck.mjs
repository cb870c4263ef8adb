#!/usr/bin/env node
// Container HEALTHCHECK: GET /healthz on the relay's metrics endpoint.
// Exit 0 = healthy, 1 = unhealthy or unreachable. Uses OUTBOX_TAIL_METRICS_LISTEN
// (default 127.0.0.1:9464); a wildcard address is probed on loopback.
const listen = (process.env.OUTBOX_TAIL_METRICS_LISTEN || '127.0.0.1:9464').trim();
const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(listen);
if (!match) {
  console.error(`healthcheck: cannot parse OUTBOX_TAIL_METRICS_LISTEN=${listen}`);
  process.exit(1);
}
let host = match[1] ?? match[2];
if (host === '0.0.0.0') host = '127.0.0.1';
if (host === '::') host = '::1';
const url = `http://${host.includes(':') ? `[${host}]` : host}:${match[3]}/healthz`;
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
  const body = (await res.text()).trim();
  if (!res.ok) console.error(`healthcheck: ${url} -> ${res.status} ${body}`);
  process.exit(res.ok ? 0 : 1);
} catch (error) {
  console.error(`healthcheck: ${url} unreachable: ${error?.cause?.code ?? error?.message ?? error}`);
  process.exit(1);
}
