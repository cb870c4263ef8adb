#!/usr/bin/env node
// Thin entry point: all logic lives in the compiled library (npm run build).
import { main } from '../dist/src/cli/main.js';

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
