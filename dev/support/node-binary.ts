import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A node binary to run the relay on, for runtime comparisons: a path as
 * given (e.g. /usr/bin/node, the machine's Node.js 20), or a pinned major
 * ("24", "22") from the cache, fetched on first use (bin/node-runtime.sh).
 */
export function resolveNodeBinary(spec: string): string {
  if (spec.includes('/')) return spec;
  const line = execFileSync(`${ROOT}bin/with-node.sh`, ['--env'], { env: { ...process.env, OUTBOX_TAIL_NODE_VERSION: spec }, encoding: 'utf8' });
  const dir = /^export PATH='([^']+)'/.exec(line)?.[1];
  if (!dir) throw new Error(`bin/with-node.sh --env printed no PATH for Node.js ${spec}: ${line}`);
  return `${dir}/node`;
}
