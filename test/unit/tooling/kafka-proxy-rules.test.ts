import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FrameSplitter } from '../../faults/kafka-frames.js';
import { TcpProxy } from '../../faults/tcp-proxy.js';

/**
 * The proxy's request rules on loopback sockets, against a fake broker that
 * answers every request frame with a response frame carrying its correlation
 * id: what is held, duplicated, dropped and delivered late, byte for byte.
 */

function request(apiKey: number, correlationId: number): Buffer {
  const b = Buffer.alloc(4 + 10 + 4);
  b.writeInt32BE(b.length - 4, 0);
  b.writeInt16BE(apiKey, 4);
  b.writeInt16BE(1, 6);
  b.writeInt32BE(correlationId, 8);
  b.writeInt16BE(-1, 12); // null client id
  b.writeInt32BE(0xabcd, 14); // a body
  return b;
}

function response(correlationId: number): Buffer {
  const b = Buffer.alloc(4 + 4 + 4 + 2);
  b.writeInt32BE(b.length - 4, 0);
  b.writeInt32BE(correlationId, 4);
  return b;
}

interface FakeBroker {
  port: number;
  /** Correlation ids received, per connection, in order. */
  received: number[][];
  close(): Promise<void>;
}

async function fakeBroker(): Promise<FakeBroker> {
  const received: number[][] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const mine: number[] = [];
    received.push(mine);
    const splitter = new FrameSplitter();
    socket.on('data', (chunk) => {
      for (const f of splitter.push(chunk)) {
        const id = f.readInt32BE(8);
        mine.push(id);
        socket.write(response(id));
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    received,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

async function client(port: number): Promise<{ socket: net.Socket; responses: number[]; waitFor(n: number): Promise<void> }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise((r) => socket.once('connect', r));
  const responses: number[] = [];
  const splitter = new FrameSplitter();
  socket.on('data', (chunk) => {
    for (const f of splitter.push(chunk)) responses.push(f.readInt32BE(4));
  });
  return {
    socket,
    responses,
    waitFor: async (n) => {
      for (let i = 0; i < 200 && responses.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    },
  };
}

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function setup() {
  const broker = await fakeBroker();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: broker.port }, {}, { kafkaFrames: true });
  const c = await client(proxy.port);
  cleanup.push(
    () => broker.close(),
    () => proxy.close(),
    async () => void c.socket.destroy(),
  );
  return { broker, proxy, c };
}

describe('the Kafka proxy’s request rules', () => {
  it('holds the requests the rule names (the client hears nothing), passes the rest, and delivers the held ones late on a connection of its own', async () => {
    const { broker, proxy, c } = await setup();
    proxy.setRequestRule((frame) => (frame.apiKey === 0 ? 'hold' : 'pass'));
    c.socket.write(Buffer.concat([request(0, 1), request(26, 2), request(0, 3), request(3, 4)]));
    await c.waitFor(2);
    expect(c.responses).toEqual([2, 4]);
    expect(proxy.heldCount).toBe(2);
    const late = await proxy.releaseHeld();
    expect(late.map((r) => [r.correlationId, r.verdict, r.lateAt !== undefined])).toEqual([
      [1, 'hold', true],
      [3, 'hold', true],
    ]);
    // The client's connection carried only what passed; the late ones came on a second connection, in order.
    expect(broker.received).toEqual([
      [2, 4],
      [1, 3],
    ]);
    expect(c.responses).toEqual([2, 4]);
  });

  it('delivers held requests just before the next request of a kind, which then follows them', async () => {
    const { broker, proxy, c } = await setup();
    proxy.setRequestRule((frame) => (frame.apiKey === 26 ? 'hold' : 'pass'));
    c.socket.write(request(26, 10));
    for (let i = 0; i < 100 && proxy.heldCount === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const released = proxy.releaseBefore(0);
    proxy.setRequestRule(null);
    c.socket.write(Buffer.concat([request(3, 11), request(0, 12)]));
    const late = await released;
    await c.waitFor(2);
    expect(late.map((r) => r.correlationId)).toEqual([10]);
    expect(broker.received).toEqual([[11, 12], [10]]);
    expect(late[0]!.lateAt!).toBeLessThanOrEqual(proxy.requests.find((r) => r.correlationId === 12)!.at);
  });

  it('duplicates a request, and drops responses while half-open (requests still reach the broker)', async () => {
    const { broker, proxy, c } = await setup();
    proxy.setRequestRule((frame) => (frame.apiKey === 0 ? 'duplicate' : 'pass'));
    c.socket.write(request(0, 20));
    await c.waitFor(2);
    expect(broker.received[0]).toEqual([20, 20]);
    expect(c.responses).toEqual([20, 20]);
    proxy.setRequestRule(null);
    proxy.dropResponses(true);
    c.socket.write(request(3, 21));
    for (let i = 0; i < 100 && broker.received[0]!.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(broker.received[0]).toEqual([20, 20, 21]);
    proxy.dropResponses(false);
    c.socket.write(request(3, 22));
    await c.waitFor(3);
    expect(c.responses).toEqual([20, 20, 22]);
  });
});
