// The crash and fault recounts both assert order_violations === 0 with this
// counter; these cases prove a zero there means the order held, not that the
// counter cannot count.
import { describe, expect, it } from 'vitest';
import { countOrderViolations } from '../../crash/crash-harness.js';

const record = (id: string, key: string, commitLsn: string, eventType = 'OrderCreated') => ({
  key,
  headers: { id, commit_lsn: commitLsn, event_type: eventType },
});

describe('the I5 order recount (countOrderViolations)', () => {
  it('finds none when each key arrives in commit order, whatever the interleaving of keys', () => {
    expect(countOrderViolations([record('a1', 'a', '0/100'), record('b1', 'b', '0/90'), record('a2', 'a', '0/200'), record('b2', 'b', '0/300')])).toBe(0);
  });

  it('counts a record of a key that arrives after a later commit of the same key', () => {
    expect(countOrderViolations([record('a2', 'a', '0/200'), record('a1', 'a', '0/100')])).toBe(1);
  });

  it('compares LSNs as numbers, not as strings', () => {
    // As strings "0/1000000" < "0/FFFFFF"; as LSNs it is the later one.
    expect(countOrderViolations([record('a1', 'a', '0/FFFFFF'), record('a2', 'a', '0/1000000')])).toBe(0);
    expect(countOrderViolations([record('a2', 'a', '0/1000000'), record('a1', 'a', '0/FFFFFF')])).toBe(1);
  });

  it('counts a creation that arrives after the cancellation of the same order', () => {
    expect(countOrderViolations([record('c', 'o-1', '0/100', 'OrderCancelled'), record('n', 'o-1', '0/100', 'OrderCreated')])).toBe(1);
  });

  it('ignores replays: only the first occurrence of an id is judged', () => {
    expect(countOrderViolations([record('a1', 'a', '0/100'), record('a2', 'a', '0/200'), record('a1', 'a', '0/100')])).toBe(0);
  });
});
