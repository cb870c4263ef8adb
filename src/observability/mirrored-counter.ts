import { Counter, type Registry } from 'prom-client';

/**
 * A counter that mirrors a monotonic number kept elsewhere (RelayStats,
 * ConsumerStats): the difference since the last scrape is added at collect
 * time. A number that went down (a new session restarting its count) counts
 * from zero again.
 */
export function mirroredCounter(registry: Registry, name: string, help: string, read: () => number): void {
  let last = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const value = read();
      if (value < last) last = 0;
      if (value > last) this.inc(value - last);
      last = value;
    },
  });
}
