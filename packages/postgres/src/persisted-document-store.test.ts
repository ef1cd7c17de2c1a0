import { runPersistedDocumentStoreConformance } from '@api-blocks/graphql/testing'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, counting, dropSchema, testSchema } from '../test/databases.ts'
import { PostgresStoreError } from './error.ts'
import { migrate } from './migrations.ts'
import { PostgresPersistedDocumentStore } from './persisted-document-store.ts'
import type { Queryable } from './queryable.ts'

const T0 = 1_700_000_000_000
const MINUTE = 60_000

test('a db without query, a bad clock, bound or schema is refused', () => {
  const db = new pg.Client()
  expect(() => new PostgresPersistedDocumentStore({ db: {} as Queryable })).toThrow(TypeError)
  expect(
    () => new PostgresPersistedDocumentStore({ db, clock: 5 as unknown as () => number }),
  ).toThrow(TypeError)
  expect(() => new PostgresPersistedDocumentStore({ db, schema: 'A' })).toThrow(TypeError)
  for (const bound of [0, 1.5, Number.NaN]) {
    expect(() => new PostgresPersistedDocumentStore({ db, maxDocuments: bound })).toThrow(
      RangeError,
    )
    expect(() => new PostgresPersistedDocumentStore({ db, maxDocumentBytes: bound })).toThrow(
      RangeError,
    )
  }
  const store = new PostgresPersistedDocumentStore({ db })
  expect([store.maxDocuments, store.maxDocumentBytes]).toEqual([10_000, 100 * 1024])
})

test('bad ids and oversize documents are refused (get answers undefined) before anything is sent; a driver error is QUERY_FAILED', async () => {
  const counted = counting({ query: async () => ({ rows: [] }) })
  const store = new PostgresPersistedDocumentStore({ db: counted.db, maxDocumentBytes: 10 })
  expect(await store.get('')).toBeUndefined()
  expect(await store.get('x'.repeat(257))).toBeUndefined()
  await expect(store.set('', '{ a }')).rejects.toThrow(RangeError)
  await expect(store.set('d', 'x'.repeat(11))).rejects.toThrow(RangeError)
  await expect(store.set('d', 'é'.repeat(6))).rejects.toThrow(RangeError)
  await expect(store.set('d', 5 as unknown as string)).rejects.toThrow(TypeError)
  expect(counted.statements).toEqual([])
  const failure = new Error('Connection terminated unexpectedly')
  const failing = new PostgresPersistedDocumentStore({
    db: { query: () => Promise.reject(failure) },
  })
  const error = await failing.get('d').catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(PostgresStoreError)
  expect(error).toMatchObject({ code: 'QUERY_FAILED', operation: 'graphql-documents.get' })
  expect((error as PostgresStoreError).cause).toBe(failure)
  await expect(
    new PostgresPersistedDocumentStore({
      db: { query: async () => ({ rows: [{ document: 'text' }] }) },
    }).get('d'),
  ).rejects.toMatchObject({ code: 'UNEXPECTED_ROW' })
})

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`PostgresPersistedDocumentStore on ${backend.title}`, () => {
    const schema = testSchema()
    let db: Queryable
    let close: () => Promise<void>
    let now = T0

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
      await migrate(db, { schema })
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      await dropSchema(db, schema)
      await close()
    })

    runPersistedDocumentStoreConformance(
      `PostgresPersistedDocumentStore on ${backend.title}`,
      () => new PostgresPersistedDocumentStore({ db, schema }),
      { maxDocumentBytes: 100 * 1024 },
    )

    /** A store in a table of its own (a prefix), so the row counts below are exact. */
    async function isolated(maxDocuments: number) {
      const tablePrefix = `t${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}_`
      await migrate(db, { schema, tablePrefix })
      const counted = counting(db)
      const store = new PostgresPersistedDocumentStore({
        db: counted.db,
        schema,
        tablePrefix,
        maxDocuments,
        clock: () => now,
      })
      const used = async () => {
        const { rows } = await db.query(
          `SELECT id, last_used_at FROM "${schema}"."${tablePrefix}graphql_documents" ORDER BY id`,
        )
        return Object.fromEntries(
          rows.map((row) => {
            const { id, last_used_at } = row as { id: string; last_used_at: number }
            return [id, last_used_at - T0]
          }),
        )
      }
      return { store, statements: counted.statements, used }
    }

    test('one statement per operation; a read touches the last use at most once a minute', async () => {
      now = T0
      const { store, statements, used } = await isolated(10)
      await store.set('a', '{ a }')
      expect(await store.get('a')).toBe('{ a }')
      expect(await store.get('b')).toBeUndefined()
      expect(statements).toEqual(['WITH', 'WITH', 'WITH'])
      now = T0 + MINUTE
      await store.get('a')
      expect(await used()).toEqual({ a: 0 }) // not older than a minute: no write
      now = T0 + MINUTE + 1
      await store.get('a')
      expect(await used()).toEqual({ a: MINUTE + 1 })
    })

    test('past maxDocuments a set deletes the least recently used documents', async () => {
      now = T0
      const { store, used } = await isolated(3)
      for (const [i, id] of ['a', 'b', 'c'].entries()) {
        now = T0 + i * MINUTE
        await store.set(id, `{ ${id} }`)
      }
      now = T0 + 10 * MINUTE
      expect(await store.get('a')).toBe('{ a }') // a is now the most recently used
      now = T0 + 11 * MINUTE
      await store.set('d', '{ d }') // b goes
      expect(Object.keys(await used())).toEqual(['a', 'c', 'd'])
      now = T0 + 12 * MINUTE
      await store.set('c', '{ c2 }') // a replacement keeps the count, and makes c recent
      expect(Object.keys(await used())).toEqual(['a', 'c', 'd'])
      now = T0 + 13 * MINUTE
      await store.set('e', '{ e }') // a goes: used at minute 10, c at 12, d at 11
      expect(Object.keys(await used())).toEqual(['c', 'd', 'e'])
      expect(await store.get('c')).toBe('{ c2 }')
    })

    test('50 concurrent sets of new documents keep the table near its cap, and the next set restores it', async () => {
      now = T0
      const { store, used } = await isolated(10)
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          store.set(`d${String(i).padStart(2, '0')}`, `{ d${i} }`),
        ),
      )
      // Each set prunes what it sees past the cap: only the inserts still in flight on the other
      // connections (the server pool has 8; PGlite runs one statement at a time) can stay over.
      expect(Object.keys(await used()).length).toBeLessThanOrEqual(10 + 8)
      now = T0 + MINUTE
      await store.set('last', '{ last }')
      const kept = Object.keys(await used())
      expect(kept.length).toBe(10)
      expect(kept).toContain('last')
    })

    test('documents with U+0000 and every plane come back exactly (UTF-8 in bytea)', async () => {
      const store = new PostgresPersistedDocumentStore({ db, schema })
      const document = '{ a(s: "\u0000 é 東 🎉") } # \u0000'
      await store.set('nul', document)
      expect(await store.get('nul')).toBe(document)
    })

    test('before migrate, a store answers NOT_MIGRATED', async () => {
      const store = new PostgresPersistedDocumentStore({ db, schema: testSchema() })
      await expect(store.get('a')).rejects.toMatchObject({ code: 'NOT_MIGRATED' })
      await expect(store.set('a', '{ a }')).rejects.toMatchObject({ code: 'NOT_MIGRATED' })
    })
  })
}
