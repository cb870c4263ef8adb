// Negative control for the idle-outbox scenario, test code only: preloaded into
// the real daemon (NODE_OPTIONS=--import <this file>), it makes the compiled
// relay's frontier ignore keepalives, so an idle outbox never confirms the WAL
// that other tables write (docs/architecture.md#lsn-rules, rule 5 left out).
import { Checkpointer } from '../../dist/src/pipeline/checkpoint/checkpointer.js';

Checkpointer.prototype.keepalive = function keepalive() {};
