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
 *
 * With `kafkaFrames` (the late-request nemesis, late-requests.ts) the proxy
 * reads Kafka framing in both directions and a rule decides, request by
 * request: pass, hold (kept aside, the client hears nothing), or duplicate.
 * Held requests are delivered later on a connection of the proxy's own (the
 * late request of a client that gave up on its connection), with their
 * responses read back; and responses can be dropped (half-open: requests
 * reach the broker, nothing comes back).
 */
import net from 'node:net';
import { FrameSplitter, parseRequest, parseResponse, producerFields, responseCorrelationId, type ProducerFields, type RequestFrame } from './kafka-frames.js';

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
  id: number;
  client: net.Socket;
  upstream: net.Socket | null;
  up: Direction | null;
  down: Direction | null;
  /** Opened before a heal('fresh'): never moves again. */
  dead: boolean;
  /** Accepted during a black hole: dial upstream once it heals. */
  pendingDial: boolean;
  closed: boolean;
  /** kafkaFrames: requests sent on this link, by correlation id, for reading their responses. */
  inflight: Map<number, RequestRecord>;
  /** kafkaFrames: frames that wait while held requests are delivered first (releaseBefore). */
  blocked: Buffer[] | null;
}

export type RequestVerdict = 'pass' | 'hold' | 'duplicate';

/** One Kafka request the proxy saw, with what it did and what the broker answered. */
export interface RequestRecord {
  at: number;
  link: number;
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  producer: ProducerFields | null;
  verdict: RequestVerdict;
  /** The response's error code (null: not read or not answered yet). */
  errorCode: number | null;
  /** Produce responses: the base offset of the first partition's batch. */
  baseOffset?: bigint;
  /** InitProducerId responses: the producer id and epoch the broker handed out. */
  assigned?: { producerId: bigint; producerEpoch: number };
  /** Held requests: when they were delivered (late) and what the broker answered then. */
  lateAt?: number;
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
  private nextLinkId = 1;
  /** kafkaFrames: every request seen, in arrival order. */
  readonly requests: RequestRecord[] = [];
  private rule: ((frame: RequestFrame, producer: ProducerFields | null) => RequestVerdict) | null = null;
  private held: Array<{ frame: RequestFrame; record: RequestRecord }> = [];
  private dropping = false;
  private releaseTrigger: { apiKey: number; done: (records: RequestRecord[]) => void; fail: (e: Error) => void } | null = null;

  private constructor(
    private readonly server: net.Server,
    readonly host: string,
    readonly port: number,
    private target: { host: string; port: number },
    /** Reads Kafka request/response framing (the late-request nemesis). */
    readonly kafkaFrames: boolean,
  ) {}

  /** Forwards new connections elsewhere: a proxy whose address had to be known before its target existed. */
  retarget(target: { host: string; port: number }): void {
    this.target = target;
  }

  /** Listens on host:port (port 0 = any free port) and forwards to target. */
  static async start(
    target: { host: string; port: number },
    listen: { host?: string; port?: number } = {},
    options: { kafkaFrames?: boolean } = {},
  ): Promise<TcpProxy> {
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
    proxy = new TcpProxy(server, host, address.port, target, options.kafkaFrames ?? false);
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

  /**
   * kafkaFrames: from now on `rule` decides what happens to each request
   * (null: pass everything). Held requests stay held until releaseHeld() or
   * releaseBefore().
   */
  setRequestRule(rule: ((frame: RequestFrame, producer: ProducerFields | null) => RequestVerdict) | null): void {
    this.requireFrames();
    this.rule = rule;
  }

  /** kafkaFrames: half-open while on: requests reach the broker, its responses are dropped (whole frames). */
  dropResponses(on: boolean): void {
    this.requireFrames();
    this.dropping = on;
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Delivers the held requests now, in order, on a connection of the proxy's own; resolves with their records once answered. */
  releaseHeld(): Promise<RequestRecord[]> {
    const held = this.held;
    this.held = [];
    return this.deliverLate(held);
  }

  /**
   * Delivers the held requests just before the next request of `apiKey`
   * (from any client connection) goes on: the worst moment for a late
   * request, right after the client moved on and before it sends more.
   * Resolves with their records once the broker answered them.
   */
  releaseBefore(apiKey: number): Promise<RequestRecord[]> {
    this.requireFrames();
    return new Promise((done, fail) => (this.releaseTrigger = { apiKey, done, fail }));
  }

  /** kafkaFrames: back to a plain path (no rule, responses flow, nothing held or waiting). */
  resetRequestRules(): void {
    this.rule = null;
    this.dropping = false;
    this.held = [];
    this.releaseTrigger?.fail(new Error('the request rules were reset before the release'));
    this.releaseTrigger = null;
  }

  private requireFrames(): void {
    if (!this.kafkaFrames) throw new Error('this proxy was started without kafkaFrames: it does not read Kafka requests');
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
    const link: Link = {
      id: this.nextLinkId++,
      client,
      upstream: null,
      up: null,
      down: null,
      dead: false,
      pendingDial: false,
      closed: false,
      inflight: new Map(),
      blocked: null,
    };
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
    const splitter = this.kafkaFrames ? new FrameSplitter() : null;
    from.on('data', (chunk: Buffer) => {
      if (name === 'up') this.counters.bytesUp += chunk.length;
      else this.counters.bytesDown += chunk.length;
      if (!splitter) {
        dir.queue.push({ due: Date.now() + this.latency, chunk });
        this.flush(link, dir);
        return;
      }
      for (const frame of splitter.push(chunk)) {
        if (name === 'up') this.onRequest(link, dir, frame);
        else this.onResponse(link, dir, frame);
      }
    });
    from.on('end', () => {
      dir.ended = true;
      this.flush(link, dir);
    });
    return dir;
  }

  private onRequest(link: Link, dir: Direction, bytes: Buffer): void {
    if (link.blocked) {
      link.blocked.push(bytes);
      return;
    }
    const frame = parseRequest(bytes);
    const trigger = this.releaseTrigger;
    if (trigger && frame.apiKey === trigger.apiKey) {
      // This request waits until the held ones were delivered and answered.
      this.releaseTrigger = null;
      link.blocked = [bytes];
      void this.releaseHeld().then(
        (records) => {
          const blocked = link.blocked ?? [];
          link.blocked = null;
          for (const b of blocked) this.onRequest(link, dir, b);
          trigger.done(records);
        },
        (error: Error) => {
          link.blocked = null;
          trigger.fail(error);
        },
      );
      return;
    }
    let producer: ProducerFields | null;
    try {
      producer = producerFields(frame);
    } catch {
      // A request this parser misreads is still forwarded, just without its producer fields.
      producer = null;
    }
    const verdict = this.rule?.(frame, producer) ?? 'pass';
    const record: RequestRecord = {
      at: Date.now(),
      link: link.id,
      apiKey: frame.apiKey,
      apiVersion: frame.apiVersion,
      correlationId: frame.correlationId,
      producer,
      verdict,
      errorCode: null,
    };
    this.requests.push(record);
    if (verdict === 'hold') {
      this.held.push({ frame, record });
      return;
    }
    link.inflight.set(frame.correlationId, record);
    const copies = verdict === 'duplicate' ? 2 : 1;
    for (let i = 0; i < copies; i++) dir.queue.push({ due: Date.now() + this.latency, chunk: bytes });
    this.flush(link, dir);
  }

  private onResponse(link: Link, dir: Direction, bytes: Buffer): void {
    const record = link.inflight.get(responseCorrelationId(bytes));
    if (record) {
      link.inflight.delete(record.correlationId);
      readResponse(record, bytes);
    }
    if (this.dropping) return;
    dir.queue.push({ due: Date.now() + this.latency, chunk: bytes });
    this.flush(link, dir);
  }

  /** The held requests, on a connection of the proxy's own to the broker: their responses go nowhere but into the records. */
  private deliverLate(held: Array<{ frame: RequestFrame; record: RequestRecord }>): Promise<RequestRecord[]> {
    if (held.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: this.target.host, port: this.target.port });
      socket.setNoDelay(true);
      // One connection: the broker answers in request order.
      let answered = 0;
      const splitter = new FrameSplitter();
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`late requests: ${held.length - answered} of ${held.length} unanswered by the broker after 20 s`));
      }, 20_000);
      socket.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      socket.on('data', (chunk: Buffer) => {
        for (const frame of splitter.push(chunk)) {
          if (answered < held.length) readResponse(held[answered++]!.record, frame);
        }
        if (answered === held.length) {
          clearTimeout(timer);
          socket.destroy();
          resolve(held.map((h) => h.record));
        }
      });
      socket.on('connect', () => {
        for (const h of held) {
          h.record.lateAt = Date.now();
          socket.write(h.frame.bytes);
        }
      });
    });
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

function readResponse(record: RequestRecord, bytes: Buffer): void {
  try {
    const response = parseResponse(bytes, record.apiKey, record.apiVersion);
    record.errorCode = response.errorCode;
    if (response.baseOffset !== undefined) record.baseOffset = response.baseOffset;
    if (response.producerId !== undefined && response.producerEpoch !== undefined)
      record.assigned = { producerId: response.producerId, producerEpoch: response.producerEpoch };
  } catch {
    /* a version this parser does not read: errorCode stays null */
  }
}
