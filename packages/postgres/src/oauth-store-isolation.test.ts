import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { databaseUrl, dropSchema, testSchema } from '../test/databases.ts'
import { code, family, id, MINUTE, T0, token } from '../test/oauth-records.ts'
import { PostgresStoreError } from './error.ts'
import { migrate } from './migrations.ts'
import { PostgresOAuthStore } from './oauth-store.ts'
import type { Queryable } from './queryable.ts'

/** A driver that fails its first `failures` statements with SQLSTATE `code`, then answers. */
function failing(code: string, failures: number): { db: Queryable; calls: () => number } {
  let calls = 0
  const db: Queryable = {
    query: async () => {
      calls++
      if (calls <= failures) {
        throw Object.assign(new Error('could not serialize access due to concurrent update'), {
          code,
        })
      }
      return { rows: [] }
    },
  }
  return { db, calls: () => calls }
}

describe('a statement that fails as a serialization failure or deadlock', () => {
  test('runs again on its own (40001, 40P01), and answers as if it had not failed', async () => {
    for (const sqlstate of ['40001', '40P01']) {
      const driver = failing(sqlstate, 2)
      const store = new PostgresOAuthStore({ db: driver.db })
      expect(await store.consumeCode('h', T0)).toEqual({ state: 'absent' })
      expect(driver.calls()).toBe(3)
    }
  })

  test('runs 5 times at most, then rejects with QUERY_FAILED, the driver error as cause', async () => {
    const driver = failing('40001', Number.POSITIVE_INFINITY)
    const store = new PostgresOAuthStore({ db: driver.db })
    const error = await store.remember('k', T0 + MINUTE, T0).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(PostgresStoreError)
    expect(error).toMatchObject({ code: 'QUERY_FAILED', operation: 'oauth.remember' })
    expect((error as PostgresStoreError).cause).toMatchObject({ code: '40001' })
    expect(driver.calls()).toBe(5)
  })

  test('inside a caller transaction (withDb) never runs again: the transaction is aborted', async () => {
    const driver = failing('40001', 1)
    const store = new PostgresOAuthStore({ db: { query: async () => ({ rows: [] }) } })
    await expect(store.withDb(driver.db).consumeCode('h', T0)).rejects.toMatchObject({
      code: 'QUERY_FAILED',
    })
    expect(driver.calls()).toBe(1)
  })

  test('any other failure is not retried', async () => {
    const driver = failing('57P01', 1)
    const store = new PostgresOAuthStore({ db: driver.db })
    await expect(store.consumeCode('h', T0)).rejects.toMatchObject({ code: 'QUERY_FAILED' })
    expect(driver.calls()).toBe(1)
  })
})

describe.skipIf(databaseUrl === undefined)(
  'PostgresOAuthStore on a server whose default isolation is REPEATABLE READ',
  () => {
    const schema = testSchema()
    let pool: pg.Pool
    const N = 50
    const all = <T>(run: (n: number) => Promise<T>) =>
      Promise.all(Array.from({ length: N }, (_, n) => run(n)))
    const tally = (states: readonly unknown[]) =>
      states.reduce<Record<string, number>>((counts, state) => {
        counts[String(state)] = (counts[String(state)] ?? 0) + 1
        return counts
      }, {})

    beforeAll(async () => {
      pool = new pg.Pool({
        connectionString: databaseUrl,
        max: 8,
        options: '-c default_transaction_isolation=repeatable\\ read',
      })
      await migrate(pool, { schema })
      // Every connection open, so the races run over all of them.
      await all(() => pool.query('SELECT 1'))
    })
    afterAll(async () => {
      await dropSchema(pool, schema)
      await pool.end()
    })

    test('the pool really runs REPEATABLE READ', async () => {
      const { rows } = await pool.query('SHOW transaction_isolation')
      expect(rows).toEqual([{ transaction_isolation: 'repeatable read' }])
    })

    test(`of ${N} concurrent consumeCode calls exactly one consumes, the others answer replayed, none fails`, async () => {
      const store = new PostgresOAuthStore({ db: pool, schema })
      const c = code()
      await store.saveCode(c)
      const answers = await all(() => store.consumeCode(c.codeHash, T0 + 1))
      expect(tally(answers.map((answer) => answer.state))).toEqual({
        consumed: 1,
        replayed: N - 1,
      })
    })

    test(`of ${N} concurrent rotateRefresh calls exactly one rotates, the others answer reused and the family is revoked, none fails`, async () => {
      const store = new PostgresOAuthStore({ db: pool, schema })
      const f = family()
      const rt = token(f.id, 'refresh_token')
      expect(await store.issue(f, [rt], T0)).toBe('issued')
      const nexts = Array.from({ length: N }, () => [
        token(f.id, 'access_token'),
        token(f.id, 'refresh_token'),
      ])
      const answers = await all((n) =>
        store.rotateRefresh(f.id, rt.tokenHash, nexts[n] ?? [], T0 + 1, { graceMs: 0 }),
      )
      expect(tally(answers.map((answer) => answer.state))).toEqual({ rotated: 1, reused: N - 1 })
      for (const next of nexts) {
        for (const t of next)
          expect(await store.findToken(f.id, t.tokenHash, T0 + 2)).toBeUndefined()
      }
      expect(await store.issue(f, [token(f.id, 'access_token')], T0 + 2)).toBe('revoked')
    })

    test(`of ${N} concurrent remember calls exactly one answers true, none fails`, async () => {
      const store = new PostgresOAuthStore({ db: pool, schema })
      const key = `jti:${id()}`
      expect(tally(await all(() => store.remember(key, T0 + MINUTE, T0)))).toEqual({
        true: 1,
        false: N - 1,
      })
    })
  },
)
