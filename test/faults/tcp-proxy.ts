/**
 * A TCP proxy for network faults between the relay and a server (after
 * pg-boss's halfOpenProxy): pass-through, added latency, and a black hole.
 *
 * Black hole, not a refusal: connections stay open and nothing arrives, in
 * either direction, not even a FIN or RST. Existing connections stop moving
 * (the proxy stops reading, so no byte is lost, like packets held by a
 * partition), new connections are accepted and then hear nothing, and a close
 * by either side is not passed on while the hole lasts.
 *
 * heal('resume') ends the partition as a real network would: held bytes and
 * closes flow again. heal('fresh') lets only NEW connections through; the ones
 * opened before stay silent forever (a lost NAT/conntrack entry), so a client
 * recovers only if it notices a dead connection by itself.
 */
import net from 'node:net';

export type HealMode = 'resume' | 'fresh';

interface Direction {
  from: net.Socket;
  to: net.Socket;
  queue: Array<{ due: number; chunk: Buffer }>;
  timer: NodeJS.Timeout | null;
  /** The source ended (FIN); pass it on once the queue is empty. */
  ended: boolean;
}

interface Link {
  client: net.Socket;
  upstream: net.Socket | null;
  up: Direction | null;
  down: Direction | null;
  /** Opened before a heal('fresh'): never moves again. */
  dead: boolean;
  /** Accepted during a black hole: dial upstream once it heals. */
  pendingDial: boolean;
  closed: boolean;
}

export interface ProxyStats {
  accepted: number;
  open: number;
  bytesUp: number;
  bytesDown: number;
}

export class TcpProxy {
  private readonly links = new Set<Link>();
  private holed = false;
  private latency = 0;
  private readonly counters = { accepted: 0, bytesUp: 0, bytesDown: 0 };

  private constructor(
    private readonly server: net.Server,
    readonly host: string,
    readonly port: number,
    private target: { host: string; port: number },
  ) {}

  /** Forwards new connections elsewhere: a proxy whose address had to be known before its target existed. */
  retarget(target: { host: string; port: number }): void {
    this.target = target;
  }

  /** Listens on host:port (port 0 = any free port) and forwards to target. */
  static async start(target: { host: string; port: number }, listen: { host?: string; port?: number } = {}): Promise<TcpProxy> {
    const host = listen.host ?? '127.0.0.1';
    // Assigned once the server exists; its connection handler runs only after that.
    // eslint-disable-next-line prefer-const
    let proxy!: TcpProxy;
    const server = net.createServer({ pauseOnConnect: true, noDelay: true }, (socket) => proxy.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen.port ?? 0, host, () => resolve());
    });
    const address = server.address() as net.AddressInfo;
    proxy = new TcpProxy(server, host, address.port, target);
    return proxy;
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  get blackholed(): boolean {
    return this.holed;
  }

  stats(): ProxyStats {
    return { ...this.counters, open: [...this.links].filter((l) => !l.closed).length };
  }

  /** Adds `ms` of delay to every chunk, in each direction (order kept). */
  setLatency(ms: number): void {
    this.latency = ms;
  }

  /** Cuts the path: nothing moves and nothing closes until heal(). */
  blackhole(): void {
    this.holed = true;
    for (const link of this.links) this.freeze(link);
  }

  heal(mode: HealMode = 'resume'): void {
    this.holed = false;
    for (const link of this.links) {
      if (link.closed) continue;
      if (mode === 'fresh') {
        link.dead = true;
        this.freeze(link);
        continue;
      }
      if (link.dead) continue;
      if (link.pendingDial) this.dial(link);
      else this.thaw(link);
    }
  }

  /** Closes every connection at once (RST), like a restarted middlebox. */
  resetAll(): void {
    for (const link of this.links) this.destroy(link);
  }

  async close(): Promise<void> {
    this.resetAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.counters.accepted++;
    client.setNoDelay(true);
    const link: Link = { client, upstream: null, up: null, down: null, dead: false, pendingDial: false, closed: false };
    this.links.add(link);
    client.on('error', () => undefined);
    client.on('close', () => {
      if (!link.upstream) return this.destroy(link);
      // While the path is cut the server must not learn about it (thaw() passes it on).
      if (this.holed || link.dead) return;
      this.destroy(link);
    });
    if (this.holed) {
      link.pendingDial = true;
      return;
    }
    this.dial(link);
  }

  private dial(link: Link): void {
    link.pendingDial = false;
    if (link.client.destroyed) {
      this.destroy(link);
      return;
    }
    const upstream = net.connect({ host: this.target.host, port: this.target.port });
    upstream.setNoDelay(true);
    link.upstream = upstream;
    link.up = this.pipe(link, link.client, upstream, 'up');
    link.down = this.pipe(link, upstream, link.client, 'down');
    upstream.on('error', () => undefined);
    upstream.on('close', () => {
      // While the path is cut the client must not learn about it (thaw() passes it on).
      if (this.holed || link.dead) return;
      this.destroy(link);
    });
    link.client.resume();
  }

  private pipe(link: Link, from: net.Socket, to: net.Socket, name: 'up' | 'down'): Direction {
    const dir: Direction = { from, to, queue: [], timer: null, ended: false };
    from.on('data', (chunk: Buffer) => {
      if (name === 'up') this.counters.bytesUp += chunk.length;
      else this.counters.bytesDown += chunk.length;
      dir.queue.push({ due: Date.now() + this.latency, chunk });
      this.flush(link, dir);
    });
    from.on('end', () => {
      dir.ended = true;
      this.flush(link, dir);
    });
    return dir;
  }

  private flush(link: Link, dir: Direction): void {
    if (this.holed || link.dead || link.closed) return;
    if (dir.timer) return;
    while (dir.queue.length > 0) {
      const head = dir.queue[0]!;
      const wait = head.due - Date.now();
      if (wait > 0) {
        dir.timer = setTimeout(() => {
          dir.timer = null;
          this.flush(link, dir);
        }, wait);
        return;
      }
      dir.queue.shift();
      if (!dir.to.destroyed) dir.to.write(head.chunk);
    }
    if (dir.ended && !dir.to.destroyed) dir.to.end();
  }

  private freeze(link: Link): void {
    link.client.pause();
    link.upstream?.pause();
    for (const dir of [link.up, link.down]) {
      if (dir?.timer) {
        clearTimeout(dir.timer);
        dir.timer = null;
      }
    }
  }

  private thaw(link: Link): void {
    for (const dir of [link.up, link.down]) if (dir) this.flush(link, dir);
    if (link.upstream?.destroyed || link.client.destroyed) {
      // A side closed during the hole: now the other side hears about it.
      this.destroy(link);
      return;
    }
    link.client.resume();
    link.upstream?.resume();
  }

  private destroy(link: Link): void {
    if (link.closed) return;
    link.closed = true;
    for (const dir of [link.up, link.down]) if (dir?.timer) clearTimeout(dir.timer);
    link.client.destroy();
    link.upstream?.destroy();
    this.links.delete(link);
  }
}
