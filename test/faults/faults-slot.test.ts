/**
 * The fault scenarios about the WAL and the slot the server keeps for the relay
 * (slot-lost, idle-outbox-wal, slot-recover; SLOT_SCENARIOS), on a fault stack
 * of this file's own, beside faults.test.ts, which runs the others.
 */
import { scenarioSuite } from './fault-suite.js';
import { SLOT_SCENARIOS } from './scenarios.js';

scenarioSuite('slot and WAL', SLOT_SCENARIOS);
