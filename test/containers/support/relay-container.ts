/**
 * The relay image as a Testcontainers container inside the stack's network
 * namespace (support/netns-stack.ts). Image: OUTBOX_TAIL_TC_RELAY_IMAGE
 * (bin/with-engine.sh: localhost/outbox-tail/relay:dev; on a Docker machine
 * an image built from docker/Dockerfile, e.g. `docker build -f docker/Dockerfile -t outbox-tail:test .`).
 */
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { containerLogs, type NetnsStack } from './netns-stack.js';

export const DEFAULT_RELAY_IMAGE = 'outbox-tail:test';

export function relayImage(): string {
  return process.env.OUTBOX_TAIL_TC_RELAY_IMAGE || DEFAULT_RELAY_IMAGE;
}

/** JSON log lines of one container, as they arrive. */
export class LogLines {
  lines: string[] = [];
  private partial = '';
  private waiters: Array<() => void> = [];

  push(chunk: string): void {
    const text = this.partial + chunk;
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) if (line.trim()) this.lines.push(line);
    for (const w of this.waiters.splice(0)) w();
  }

  /** Replaces what the follow stream gave with the engine's complete log (after a stop). */
  replace(text: string): void {
    this.lines = text.split('\n').filter((l) => l.trim());
    this.partial = '';
  }

  /** Parsed JSON lines (pino); other lines are skipped. */
  json(): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const line of this.lines) {
      try {
        const v = JSON.parse(line) as unknown;
        if (v && typeof v === 'object') out.push(v as Record<string, unknown>);
      } catch {
        // not JSON: tini, the engine or a crash trace
      }
    }
    return out;
  }

  events(): string[] {
    return this.json().flatMap((l) => (typeof l.event === 'string' ? [l.event] : []));
  }

  /** Reads the engine's complete log (set by startRelayContainer): a fallback for a follow stream that missed lines. */
  refresh: (() => Promise<string>) | undefined;

  async waitForEvent(event: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    let nextRefresh = Date.now() + 2_000;
    for (;;) {
      let hit = this.json().find((l) => l.event === event);
      if (!hit && this.refresh && Date.now() >= nextRefresh) {
        nextRefresh = Date.now() + 2_000;
        this.replace(await this.refresh());
        hit = this.json().find((l) => l.event === event);
      }
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no "${event}" log line within ${timeoutMs} ms; last lines:\n${this.lines.slice(-15).join('\n')}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }
}

export interface RelayContainerOptions {
  command: string[];
  env?: Record<string, string>;
  /** Default: the container is started and its first log line awaited. */
  waitStrategy?: ReturnType<typeof Wait.forLogMessage>;
  startupTimeoutMs?: number;
}

export interface StartedRelay {
  container: StartedTestContainer;
  logs: LogLines;
  startMs: number;
}

/** The relay's own settings for the stack, as OUTBOX_TAIL_* variables. */
export function relayEnv(stack: NetnsStack, slot: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    OUTBOX_TAIL_DATABASE_URL: stack.inside.databaseUrl,
    OUTBOX_TAIL_BROKERS: stack.inside.brokers.join(','),
    OUTBOX_TAIL_SLOT: slot,
    OUTBOX_TAIL_LOG_LEVEL: 'info',
    ...extra,
  };
}

/**
 * Starts the relay image with `opts.command`. Whatever happens, the container
 * carries the stack's owner label, so the test's cleanup (support/cleanup.ts)
 * finds it.
 */
export async function startRelayContainer(stack: NetnsStack, opts: RelayContainerOptions): Promise<StartedRelay> {
  const logs = new LogLines();
  const t0 = Date.now();
  const container = new GenericContainer(relayImage())
    .withNetworkMode(stack.networkMode)
    .withLabels(stack.labels)
    .withEnvironment(opts.env ?? {})
    .withCommand(opts.command)
    .withLogConsumer((stream) => {
      stream.on('data', (chunk: Buffer | string) => logs.push(chunk.toString()));
      stream.on('error', () => undefined);
    })
    .withWaitStrategy(opts.waitStrategy ?? Wait.forLogMessage(/./))
    .withStartupTimeout(opts.startupTimeoutMs ?? 60_000);
  const started = await container.start();
  logs.refresh = () => containerLogs(started.getId());
  return { container: started, logs, startMs: Date.now() - t0 };
}
