import type { z } from 'zod';
import type { configSchema } from './config-schema.js';

/**
 * The whole resolved config, every option. Its own module so that who may see
 * it is one lint rule (.dependency-cruiser.cjs): src/config/ and src/cli/ (the
 * wiring, src/commands/run/relay-wiring.ts, among it) only; every stage declares the
 * settings it uses instead.
 */
export type RelayConfig = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
