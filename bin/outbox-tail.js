#!/usr/bin/env node
// Thin entry point: all logic lives in the compiled library (npm run build).
import module from 'node:module';
import { setFlagsFromString } from 'node:v8';

// V8 sizes the old generation at up to ~2.7x what survived the last full GC;
// in a catch-up that grew a 22 MB live heap to 64 MB between collections
// (peak RSS 144-152 MB). 150% caps it at 2.5x: peak RSS 116-121 MB for about
// 1.5 us of CPU per event. It is read at every GC, so setting it here works,
// and NODE_OPTIONS cannot carry it; `node --heap-growing-percent=N` wins.
if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent'))) setFlagsFromString('--heap-growing-percent=150');

// A relay restarted by its supervisor after a crash should stream again soon:
// V8's compiled code of our modules is kept on disk (NODE_COMPILE_CACHE, or a
// folder in the OS temp dir), which cut the CPU of a start by ~15% (0.45 -> 0.38 s
// on Node 24). Where nothing is writable it just does not cache.
module.enableCompileCache?.();
const { main } = await import('../dist/src/cli/main.js');

main().then(
  (code) => {
    process.exitCode = code;
    // A daemon that finished has nothing left worth waiting for (sockets of closed clients).
    setImmediate(() => process.exit(code));
  },
  (error) => {
    process.stderr.write(`outbox-tail: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
