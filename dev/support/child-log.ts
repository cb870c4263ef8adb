import type { ChildProcess } from 'node:child_process';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildLog<L> {
  /** Every stdout line so far, parsed. */
  lines: L[];
  /** The stderr text so far (its last 50 kB once it grows past 100 kB). */
  stderr(): string;
  /** The first line (already seen or still to come) that matches; rejects on timeout or when the child exits first. */
  waitFor(predicate: (line: L) => boolean, timeoutMs: number): Promise<L>;
}

/**
 * Follows a child's stdout as JSON lines (pino logs, or a helper's own lines;
 * a line that is not JSON goes through `raw`) and its stderr, for the test
 * relays and the bench's processes alike. `name` heads the error messages,
 * which carry the last lines and stderr so a failing test shows why.
 */
export function followChildLog<L>(child: ChildProcess, exited: Promise<ChildExit>, name: string, raw: (text: string) => L): ChildLog<L> {
  const lines: L[] = [];
  const waiters: Array<{ predicate: (l: L) => boolean; resolve: (l: L) => void }> = [];
  let stderr = '';
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      let line: L;
      try {
        line = JSON.parse(text) as L;
      } catch {
        line = raw(text);
      }
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.predicate(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > 100_000) stderr = stderr.slice(-50_000);
  });
  const tail = () =>
    `last lines:\n${lines
      .slice(-8)
      .map((l) => JSON.stringify(l))
      .join('\n')}\nstderr: ${stderr.slice(-2000)}`;
  return {
    lines,
    stderr: () => stderr,
    waitFor(predicate, timeoutMs) {
      const found = lines.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: expected log line not seen within ${timeoutMs} ms; ${tail()}`)), timeoutMs);
        void exited.then(({ code, signal }) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited (code ${code}, signal ${signal}) before the expected log line; ${tail()}`));
        });
        waiters.push({
          predicate,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
      });
    },
  };
}
