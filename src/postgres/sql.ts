import type pg from 'pg';
import { classifyPgError } from './pg-errors.js';

/** Queries that reject classified (SQLSTATE -> code, retriable flag, hint). */
export interface Sql {
  /** The rows of a query. */
  <R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /** How many rows a statement changed (DELETE, UPDATE, INSERT). */
  count(text: string, values?: unknown[]): Promise<number>;
}

/**
 * Queries on `client` whose every failure is classified where it enters,
 * saying what was being done (`pruning public.outbox`) and, when there is
 * one, which slot (a missing or busy slot's error names it).
 */
export function sqlOn(client: pg.ClientBase, doing: string, slot?: string): Sql {
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> => {
    try {
      return await client.query<R>(text, values);
    } catch (error) {
      throw classifyPgError(error, doing, slot);
    }
  };
  const sql = async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => (await query<R>(text, values)).rows;
  return Object.assign(sql, { count: async (text: string, values?: unknown[]) => (await query(text, values)).rowCount ?? 0 });
}
