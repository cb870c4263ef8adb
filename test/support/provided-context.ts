import type { StackConnection } from '../../dev/stack/index.js';

// What global-setup.ts hands to every test file of the integration and crash
// projects (vitest provide/inject; must be serialisable).
declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackConnection;
  }
}

export {};
