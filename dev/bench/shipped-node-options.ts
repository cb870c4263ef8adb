/**
 * The Node flags the shipped launchers run the relay with (docker/Dockerfile
 * `ENV NODE_OPTIONS`, docker/outbox-tail.service `Environment=NODE_OPTIONS`).
 * The bench runs every relay process with them unless --node-args says
 * otherwise, so it measures the relay as deployed; test/unit/ops-packaging
 * keeps the three in step.
 *
 * Why the flag at all: V8 grows the young generation to 3 x 16 MB under a
 * catch-up's allocation rate, and the size can only be set when the isolate
 * is created (v8.setFlagsFromString at run time is ignored), so it has to come
 * from the command line or NODE_OPTIONS.
 */
export const SHIPPED_NODE_OPTIONS = '--max-semi-space-size=2';
