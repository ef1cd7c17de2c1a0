/**
 * The databases the tests run on: PGlite always (in-process, no server), and the PostgreSQL
 * server of `DATABASE_URL` when it is set (CI sets `postgres://postgres@127.0.0.1:5432/test`);
 * without it the server suites are skipped, and their titles say so. Each suite works in a
 * schema of its own, dropped afterwards, so test files running in parallel never meet.
 *
 * @module
 */
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import type { Queryable } from '../src/queryable.ts'

/** The server's URL, or `undefined`: then the server suites are skipped. */
export const databaseUrl: string | undefined = process.env['DATABASE_URL'] || undefined

/** An open database and how to close it. */
export interface TestDatabase {
  readonly db: Queryable
  close(): Promise<void>
}

/** A backend the suites run on. */
export interface Backend {
  /** Shown in the suite title, with the reason when skipped. */
  readonly title: string
  readonly enabled: boolean
  /** Opens a new connection (a PGlite instance, or a pool of `DATABASE_URL`). */
  open(): Promise<TestDatabase>
}

/** PGlite (always) and the server (when `DATABASE_URL` is set). */
export const backends: readonly Backend[] = [
  {
    title: 'PGlite (in-process)',
    enabled: true,
    async open() {
      const db = new PGlite()
      return { db, close: () => db.close() }
    },
  },
  {
    title:
      databaseUrl === undefined
        ? 'PostgreSQL server (skipped: DATABASE_URL not set)'
        : 'PostgreSQL server (DATABASE_URL)',
    enabled: databaseUrl !== undefined,
    async open() {
      // A small pool: enough connections for real concurrency, bounded for a shared server.
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 })
      return { db: pool, close: () => pool.end() }
    },
  },
]

/** A fresh schema name for one suite. */
export function testSchema(): string {
  return `api_blocks_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`
}

/** Drops a test schema and everything in it. */
export async function dropSchema(db: Queryable, schema: string): Promise<void> {
  await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
}

/** Wraps `db`, recording each statement sent: one call is one round trip. */
export function counting(db: Queryable): { db: Queryable; statements: string[] } {
  const statements: string[] = []
  return {
    statements,
    db: {
      query: (text, params) => {
        statements.push(text.trimStart().split(/\s/, 1)[0] ?? '')
        return db.query(text, params)
      },
    },
  }
}
