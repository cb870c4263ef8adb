export { startStack } from './start-stack.js';
export type { StackConnection, StackHandle, StartStackOptions } from './types.js';
export { chooseProvider, parseBrokers, stackEnv } from './env.js';
export { probeKafka, queryPostgres, redactUrl } from './probe.js';
export { isAlive } from './process.js';
