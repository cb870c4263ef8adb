export { startStack } from './start-stack.js';
export type {
  ExternalStackConfig,
  ServerControl,
  StackConnection,
  StackHandle,
  StackProvider,
  StackProviderRequest,
  StackVersions,
  StartStackOptions,
} from './types.js';
export { chooseProvider, parseBrokers, parseProviderRequest, stackEnv, type StackEnv } from './env.js';
export { probeKafka, queryPostgres, redactUrl, waitForKafka, waitForPostgres } from './probe.js';
export { isAlive, processGroupMembers } from './process.js';
