import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, counting, databaseUrl, dropSchema, testSchema } from '../test/databases.ts'
import { PostgresStoreError } from './error.ts'
import { PostgresIdempotencyStore } from './idempotency-store.ts'
import { migrate, migrations, postgresMigrations } from './migrations.ts'
import { PostgresPersistedDocumentStore } from './persisted-document-store.ts'
import type { Queryable } from './queryable.ts'
import { PostgresDeliveryQueue } from './webhook-delivery-queue.ts'

const ALL = migrations.map(({ id }) => id)

test('migration ids are unique, and postgresMigrations fills in the names', () => {
  expect(new Set(ALL).size).toBe(ALL.length)
  const rendered = postgresMigrations({ schema: 'api', tablePrefix: 'orders_' })
  expect(rendered.map(({ id }) => id)).toEqual(ALL)
  for (const { sql } of rendered) {
    expect(sql).not.toContain('{{')
    expect(sql).toMatch(/"api"\."orders_(idempotency_records|oauth_\w+|webhook_\w+|graphql_\w+)"/)
    expect(sql).not.toMatch(/"api_blocks_|"public"/)
  }
})

test('bad schema or prefix names are refused before anything is sent', async () => {
  const counted = counting({ query: async () => ({ rows: [] }) })
  for (const options of [
    { schema: 'Public' },
    { schema: 'a"b' },
    { schema: '' },
    { schema: 'x'.repeat(64) },
    { tablePrefix: '1_' },
    { tablePrefix: 'a-b' },
    { tablePrefix: 'p'.repeat(40) },
  ]) {
    await expect(migrate(counted.db, options)).rejects.toThrow(TypeError)
  }
  expect(counted.statements).toEqual([])
})

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`migrate on ${backend.title}`, () => {
    let db: Queryable
    let close: () => Promise<void>
    const schemas: string[] = []
    const fresh = () => {
      const schema = testSchema()
      schemas.push(schema)
      return schema
    }
    const tablesIn = async (schema: string) => {
      const { rows } = await db.query(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [schema],
      )
      return rows.map((row) => (row as { table_name: string }).table_name)
    }

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      for (const schema of schemas) await dropSchema(db, schema)
      await close()
    })

    test('creates the schema and the tables; run twice, the second run is a no-op', async () => {
      const schema = fresh()
      const counted = counting(db)
      expect(await migrate(counted.db, { schema })).toEqual({ applied: ALL })
      // One DO block, then the read-back of what it applied.
      expect(counted.statements).toEqual(['DO', 'SELECT'])
      expect(await tablesIn(schema)).toEqual([
        'api_blocks_graphql_documents',
        'api_blocks_idempotency_records',
        'api_blocks_migrations',
        'api_blocks_oauth_codes',
        'api_blocks_oauth_families',
        'api_blocks_oauth_interactions',
        'api_blocks_oauth_replay_cache',
        'api_blocks_oauth_tokens',
        'api_blocks_webhook_dedup',
        'api_blocks_webhook_deliveries',
        'api_blocks_webhook_endpoints',
      ])
      expect(await migrate(db, { schema })).toEqual({ applied: [] })
      const { rows } = await db.query(`SELECT id FROM "${schema}"."api_blocks_migrations"`)
      expect(rows).toEqual(ALL.map((id) => ({ id })))
      // The store works on what was created.
      const store = new PostgresIdempotencyStore({ db, schema })
      expect(
        (await store.claim('k', { fingerprint: 'f', owner: 'o', leaseMs: 1000, now: 0 })).state,
      ).toBe('claimed')
    }, 30_000) // the first migration on a fresh PGlite compiles PL/pgSQL: seconds on a busy machine

    test('a table prefix keeps two sets of tables apart in one schema', async () => {
      const schema = fresh()
      expect(await migrate(db, { schema, tablePrefix: 'one_' })).toEqual({ applied: ALL })
      expect(await migrate(db, { schema, tablePrefix: 'two_' })).toEqual({ applied: ALL })
      const tables = ['graphql_documents', 'idempotency_records', 'migrations', 'oauth_codes']
      tables.push('oauth_families')
      tables.push('oauth_interactions', 'oauth_replay_cache', 'oauth_tokens')
      tables.push('webhook_dedup', 'webhook_deliveries', 'webhook_endpoints')
      expect(await tablesIn(schema)).toEqual([
        ...tables.map((table) => `one_${table}`),
        ...tables.map((table) => `two_${table}`),
      ])
    })

    test('the longest prefix allowed leaves every table, index and constraint name whole', async () => {
      const schema = fresh()
      const prefix = 'p'.repeat(36) // 63 bytes minus the longest suffix
      expect(await migrate(db, { schema, tablePrefix: prefix })).toEqual({ applied: ALL })
      const { rows } = await db.query(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'i') ORDER BY 1`,
        [schema],
      )
      const names = rows.map((row) => (row as { name: string }).name)
      // PostgreSQL cuts longer names silently, so whole names prove none was cut.
      for (const name of [
        'idempotency_records_ends_at',
        'oauth_interactions_expiry',
        'oauth_codes_expires_at',
        'oauth_families_ends_at',
        'oauth_tokens_expires_at',
        'oauth_replay_cache_expiry',
        'oauth_interactions_pkey',
        'webhook_endpoints_owner',
        'webhook_deliveries_due',
        'webhook_deliveries_queues',
        'webhook_deliveries_leases',
        'webhook_deliveries_endpoint',
        'webhook_deliveries_replay',
        'webhook_deliveries_final',
        'webhook_deliveries_pkey',
        'webhook_dedup_expires_at',
        'graphql_documents_used',
        'graphql_documents_pkey',
      ]) {
        expect(names).toContain(`${prefix}${name}`)
      }
      expect(names.every((name) => name.startsWith(prefix) && name.length <= 63)).toBe(true)
      const functions = await db.query(
        `SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $1`,
        [schema],
      )
      expect(functions.rows).toEqual([{ name: `${prefix}webhook_claim_per_endpoint` }])
    })

    test('a schema at 0004_webhooks gets 0005 alone, and its claim function works', async () => {
      const schema = fresh()
      await migrate(db, { schema, tablePrefix: 'at4_' })
      // Back to 0004: the one object 0005 creates, and its ledger row.
      await db.query(`DROP FUNCTION "${schema}"."at4_webhook_claim_per_endpoint"`)
      await db.query(
        `DELETE FROM "${schema}"."at4_migrations" WHERE id = '0005_webhook_claim_per_endpoint'`,
      )
      expect(await migrate(db, { schema, tablePrefix: 'at4_' })).toEqual({
        applied: ['0005_webhook_claim_per_endpoint'],
      })
      const queue = new PostgresDeliveryQueue({ db, schema, tablePrefix: 'at4_' })
      await queue.enqueue(
        ['evt_1', 'evt_2', 'evt_3'].map((eventId) => ({
          eventId,
          endpointId: 'we_1',
          eventType: 'order.created',
          payload: '{}',
          createdAt: 1,
          nextAttemptAt: 1,
        })),
      )
      const leased = await queue.claim({ now: 2, limit: 10, leaseMs: 1000, perEndpoint: 2 })
      expect(leased.map(({ eventId }) => eventId)).toEqual(['evt_1', 'evt_2'])
      expect(new Set(leased.map(({ lease }) => lease)).size).toBe(2)
      expect(await queue.claim({ now: 3, limit: 10, leaseMs: 1000, perEndpoint: 2 })).toEqual([])
    })

    test('a schema at 0005 gets 0006_graphql_persisted_documents alone, and its store works', async () => {
      const schema = fresh()
      await migrate(db, { schema, tablePrefix: 'at5_' })
      await db.query(`DROP TABLE "${schema}"."at5_graphql_documents"`)
      await db.query(
        `DELETE FROM "${schema}"."at5_migrations" WHERE id = '0006_graphql_persisted_documents'`,
      )
      expect(await migrate(db, { schema, tablePrefix: 'at5_' })).toEqual({
        applied: ['0006_graphql_persisted_documents'],
      })
      const store = new PostgresPersistedDocumentStore({ db, schema, tablePrefix: 'at5_' })
      await store.set('sha256:00', '{ __typename }')
      expect(await store.get('sha256:00')).toBe('{ __typename }')
    })

    test('concurrent calls on one connection: one applies everything, the others nothing', async () => {
      const schema = fresh()
      const results = await Promise.all([1, 2, 3].map(() => migrate(db, { schema })))
      expect(results.map(({ applied }) => applied).sort()).toEqual([[], [], ALL])
    })

    test('a failed migration applies nothing, not even the ledger; the next run applies it', async () => {
      const schema = fresh()
      // A table in the way: the first migration's CREATE TABLE fails.
      await db.query(`CREATE SCHEMA "${schema}"`)
      await db.query(`CREATE TABLE "${schema}"."api_blocks_idempotency_records" (x int)`)
      const error = await migrate(db, { schema }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(PostgresStoreError)
      expect(error).toMatchObject({ code: 'QUERY_FAILED', operation: 'migrate' })
      expect((error as PostgresStoreError).cause).toMatchObject({ code: '42P07' })
      expect(await tablesIn(schema)).toEqual(['api_blocks_idempotency_records'])
      await db.query(`DROP TABLE "${schema}"."api_blocks_idempotency_records"`)
      expect(await migrate(db, { schema })).toEqual({ applied: ALL })
    })
  })
}

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? 'migrate from two pools at once (skipped: DATABASE_URL not set)'
    : 'migrate from two pools at once (DATABASE_URL)',
  () => {
    const pools = [1, 2].map(() => new pg.Pool({ connectionString: databaseUrl, max: 2 }))
    const schemas: string[] = []
    afterAll(async () => {
      for (const schema of schemas) await dropSchema(pools[0] as pg.Pool, schema)
      await Promise.all(pools.map((pool) => pool.end()))
    })

    test('two instances starting together: no error, the migrations applied exactly once', async () => {
      // Several fresh schemas, each migrated by four callers over two pools at the same moment:
      // without the advisory lock, CREATE SCHEMA / CREATE TABLE race and fail.
      for (let round = 0; round < 5; round++) {
        const schema = testSchema()
        schemas.push(schema)
        const results = await Promise.all(
          [...pools, ...pools].map((pool) => migrate(pool, { schema })),
        )
        expect(results.map(({ applied }) => applied).sort()).toEqual([[], [], [], ALL])
        const { rows } = await (pools[0] as pg.Pool).query(
          `SELECT count(*)::integer AS n FROM "${schema}"."api_blocks_migrations"`,
        )
        expect(rows).toEqual([{ n: ALL.length }])
      }
    })
  },
)
