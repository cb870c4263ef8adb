/**
 * The fault suite (issue 7) in vitest: every scenario of scenarios.ts, at least
 * once, on fault stacks of their own (the scenarios kill, pause and cut their
 * servers), one after the other in each file: the scenarios about the slot and
 * its WAL in faults-slot.test.ts, the rest here. Their negative controls are in
 * faults-controls.test.ts, the exactly-once runs in faults-exactly-once.test.ts
 * the table-less outbox in faults-messages.test.ts and the late requests in
 * faults-late-requests.test.ts: six files, six stacks, so they run side by side. `npm run faults` runs the same scenarios
 * from the command line.
 */
import { scenarioSuite } from './fault-suite.js';
import { SCENARIOS, SLOT_SCENARIOS } from './scenarios.js';

scenarioSuite(
  'scenarios',
  SCENARIOS.map((s) => s.name).filter((name) => !SLOT_SCENARIOS.includes(name)),
);
