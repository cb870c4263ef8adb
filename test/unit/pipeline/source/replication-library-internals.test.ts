/**
 * ReplicationSource drives pg-logical-replication's private connection field
 * (socket pause for backpressure, exact standby status updates). package.json
 * pins the library; these tests fail with a clear message when an upgrade
 * moves or drops what we rely on.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { LogicalReplicationService } from 'pg-logical-replication';
import { describe, expect, it } from 'vitest';
import { LIBRARY_CONNECTION_FIELD, libraryConnection } from '../../../../src/pipeline/source/library-connection.js';

const service = () => new LogicalReplicationService({}, { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: false } });

describe('pg-logical-replication internals outbox-tail relies on', () => {
  it('package.json pins the library exactly (no range), to the installed version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
    const installed = JSON.parse(readFileSync(new URL('../../../../node_modules/pg-logical-replication/package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(pkg.dependencies['pg-logical-replication'], 'pin pg-logical-replication to an exact version: ReplicationSource reads its private fields').toBe(
      installed.version,
    );
  });

  it(`a new service has the private ${LIBRARY_CONNECTION_FIELD} field (null until it connects)`, () => {
    const s = service();
    expect(
      LIBRARY_CONNECTION_FIELD in s,
      `pg-logical-replication no longer has ${LIBRARY_CONNECTION_FIELD}: ReplicationSource cannot pause the socket or send exact status updates; adapt src/pipeline/source/library-connection.ts`,
    ).toBe(true);
    expect(libraryConnection(s)).toBeNull();
  });

  it(`the service stores the pg client's connection in ${LIBRARY_CONNECTION_FIELD} when it connects`, () => {
    const source = String((LogicalReplicationService.prototype as unknown as Record<string, unknown>).client);
    expect(
      source,
      `LogicalReplicationService.client() no longer assigns this.${LIBRARY_CONNECTION_FIELD} = this._client.connection; adapt src/pipeline/source/library-connection.ts`,
    ).toContain(`this.${LIBRARY_CONNECTION_FIELD} = this._client.connection`);
  });

  it("node-postgres' Connection still has sendCopyFromChunk (status updates are written with it)", () => {
    expect(typeof (pg as unknown as { Connection: { prototype: Record<string, unknown> } }).Connection.prototype.sendCopyFromChunk).toBe('function');
  });

  it('fails loudly, naming the fix, when the field is gone', () => {
    const s = service();
    delete (s as unknown as Record<string, unknown>)[LIBRARY_CONNECTION_FIELD];
    expect(() => libraryConnection(s)).toThrow(/pg-logical-replication has no private _connection field any more/);
  });
});
