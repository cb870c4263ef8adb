import { describe, expect, it } from 'vitest';
import { Fifo } from '../../../../src/pipeline/publish/fifo.js';

/** The backing array, which is the queue's memory: private, looked at only here. */
const backing = <T>(q: Fifo<T>) => (q as unknown as { items: (T | undefined)[] }).items;

describe('Fifo (the relay queue)', () => {
  it('hands items out in the order they came, with peek looking ahead without taking', () => {
    const q = new Fifo<string>();
    expect(q.length).toBe(0);
    expect(q.peek()).toBeUndefined();
    expect(q.shift()).toBeUndefined();
    q.push('a');
    q.push('b');
    q.push('c');
    expect(q.length).toBe(3);
    expect([q.peek(), q.peek(0), q.peek(1), q.peek(2), q.peek(3)]).toEqual(['a', 'a', 'b', 'c', undefined]);
    expect(q.shift()).toBe('a');
    expect(q.length).toBe(2);
    expect([q.peek(), q.peek(1)]).toEqual(['b', 'c']);
    expect(q.shift()).toBe('b');
    expect(q.shift()).toBe('c');
    expect(q.shift()).toBeUndefined();
    expect(q.length).toBe(0);
    q.push('d');
    expect(q.length).toBe(1);
    expect(q.shift()).toBe('d');
  });

  it('empties on clear', () => {
    const q = new Fifo<number>();
    for (let i = 0; i < 10; i++) q.push(i);
    q.shift();
    q.clear();
    expect(q.length).toBe(0);
    expect(q.peek()).toBeUndefined();
    expect(q.shift()).toBeUndefined();
    expect(backing(q)).toEqual([]);
    q.push(42);
    expect(q.peek()).toBe(42);
    expect(q.length).toBe(1);
  });

  it('does not hold on to items it handed out', () => {
    const q = new Fifo<object>();
    const item = {};
    q.push(item);
    q.push({});
    expect(q.shift()).toBe(item);
    expect(backing(q).includes(item)).toBe(false);
  });

  it('drops handed-out slots in batches of more than 4096, not on every shift', () => {
    const q = new Fifo<number>();
    const out: (number | undefined)[] = [];
    for (let i = 0; i < 4096; i++) {
      q.push(i);
      out.push(q.shift());
    }
    expect(out).toEqual(Array.from({ length: 4096 }, (_, i) => i));
    expect(backing(q)).toHaveLength(4096);
    q.push(4096);
    expect(q.shift()).toBe(4096);
    expect(backing(q)).toHaveLength(0);
    expect(q.length).toBe(0);
  });

  it('keeps the array while half of it or more is still queued, then compacts without losing or reordering an item', () => {
    const q = new Fifo<number>();
    for (let i = 0; i < 10_000; i++) q.push(i);
    const first = Array.from({ length: 5000 }, () => q.shift());
    expect(first).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect(backing(q)).toHaveLength(10_000);
    expect(q.length).toBe(5000);
    expect(q.shift()).toBe(5000);
    expect(backing(q)).toHaveLength(4999);
    expect(q.length).toBe(4999);
    expect([q.peek(), q.peek(4998), q.peek(4999)]).toEqual([5001, 9999, undefined]);
    q.push(10_000);
    const rest = Array.from({ length: 5000 }, () => q.shift());
    expect(rest).toEqual(Array.from({ length: 5000 }, (_, i) => 5001 + i));
    expect(q.length).toBe(0);
  });
});
