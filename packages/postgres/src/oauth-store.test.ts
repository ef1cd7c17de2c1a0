import type { TokenRecord } from '@api-blocks/oauth'
import { runOAuthStoreConformance } from '@api-blocks/oauth/testing'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, counting, dropSchema, testSchema } from '../test/databases.ts'
import { code, DAY, family, id, interaction, MINUTE, T0, token } from '../test/oauth-records.ts'
import { PostgresStoreError } from './error.ts'
import { migrate } from './migrations.ts'
import { PostgresOAuthStore } from './oauth-store.ts'
import type { Queryable } from './queryable.ts'

test('a db without query, or a bad schema name, is refused', () => {
  expect(() => new PostgresOAuthStore({ db: {} as Queryable })).toThrow(TypeError)
  expect(
    () => new PostgresOAuthStore({ db: new pg.Client(), schema: 'Robert"; DROP TABLE x; --' }),
  ).toThrow(TypeError)
})

test('a failing statement rejects with PostgresStoreError QUERY_FAILED, the driver error as cause', async () => {
  const failure = Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' })
  const store = new PostgresOAuthStore({ db: { query: () => Promise.reject(failure) } })
  const error = await store.consumeCode('h', T0).catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(PostgresStoreError)
  expect(error).toMatchObject({ code: 'QUERY_FAILED', operation: 'oauth.consumeCode' })
  expect((error as PostgresStoreError).cause).toBe(failure)
})

test('bad times and bad token kinds are refused before anything is sent', async () => {
  const counted = counting({ query: async () => ({ rows: [] }) })
  const store = new PostgresOAuthStore({ db: counted.db })
  const f = family()
  await expect(store.consumeCode('h', Number.NaN)).rejects.toThrow(TypeError)
  await expect(store.remember('k', Number.POSITIVE_INFINITY, T0)).rejects.toThrow(TypeError)
  const bad = { ...token(f.id, 'access_token'), kind: 'id_token' } as unknown as TokenRecord
  await expect(store.issue(f, [bad], T0)).rejects.toThrow(TypeError)
  await expect(
    store.rotateRefresh(f.id, 'h', [token(f.id, 'refresh_token', { expiresAt: Number.NaN })], T0, {
      graceMs: 0,
    }),
  ).rejects.toThrow(TypeError)
  await expect(store.purgeExpired(T0, { batchSize: 0 })).rejects.toThrow(RangeError)
  expect(counted.statements).toEqual([])
})

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`PostgresOAuthStore on ${backend.title}`, () => {
    const schema = testSchema()
    let db: Queryable
    let close: () => Promise<void>
    const store = () => new PostgresOAuthStore({ db, schema })
    const table = (name: string) => `"${schema}"."api_blocks_oauth_${name}"`

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
      await migrate(db, { schema })
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      await dropSchema(db, schema)
      await close()
    })

    runOAuthStoreConformance(backend.title, async () => {
      // Every connection of the pool open before a test starts, so the concurrency cases race
      // over all of them (a pool opens its connections lazily, one per waiting query).
      await Promise.all(Array.from({ length: 16 }, () => db.query('SELECT 1')))
      return store()
    })

    test('records read back equal the records saved (absent optional fields stay absent)', async () => {
      const s = store()
      const i = interaction({ nonce: undefined, scopes: [] })
      delete (i as { nonce?: string }).nonce
      await s.saveInteraction(i)
      expect(await s.findInteraction(i.id, T0)).toStrictEqual(i)
      const c = code({ scopes: ['a:b', 'openid'] })
      await s.saveCode(c)
      expect(await s.consumeCode(c.codeHash, T0)).toStrictEqual({ state: 'consumed', code: c })
      const f = family({ subject: undefined, authTime: undefined })
      delete (f as { subject?: string }).subject
      delete (f as { authTime?: number }).authTime
      const at = token(f.id, 'access_token', { confirmation: { jkt: 'thumbprint' } })
      expect(await s.issue(f, [at], T0)).toBe('issued')
      expect(await s.findToken(f.id, at.tokenHash, T0)).toStrictEqual({ token: at, family: f })
    })

    test('every operation is ONE statement (one round trip), whatever it finds', async () => {
      const counted = counting(db)
      const s = new PostgresOAuthStore({ db: counted.db, schema })
      const i = interaction()
      const c = code()
      const f = family()
      const rt = token(f.id, 'refresh_token')
      const next = [token(f.id, 'access_token'), token(f.id, 'refresh_token')]
      const steps: [string, () => Promise<unknown>][] = [
        ['saveInteraction', () => s.saveInteraction(i)],
        ['findInteraction', () => s.findInteraction(i.id, T0)],
        ['takeInteraction', () => s.takeInteraction(i.id, T0)],
        ['saveCode', () => s.saveCode(c)],
        ['consumeCode', () => s.consumeCode(c.codeHash, T0)],
        ['consumeCode (replayed)', () => s.consumeCode(c.codeHash, T0)],
        ['issue', () => s.issue(f, [rt], T0)],
        ['findToken', () => s.findToken(f.id, rt.tokenHash, T0)],
        ['rotateRefresh', () => s.rotateRefresh(f.id, rt.tokenHash, next, T0, { graceMs: 0 })],
        [
          'rotateRefresh (reused)',
          () => s.rotateRefresh(f.id, rt.tokenHash, [], T0, { graceMs: 0 }),
        ],
        ['revokeToken', () => s.revokeToken(f.id, rt.tokenHash, T0)],
        ['revokeFamily', () => s.revokeFamily(id(), T0, T0 + DAY)],
        ['remember', () => s.remember(id(), T0 + MINUTE, T0)],
      ]
      for (const [step, run] of steps) {
        counted.statements.length = 0
        await run()
        expect({ step, statements: counted.statements.length }).toEqual({ step, statements: 1 })
      }
    })

    describe('races beyond the conformance suite, over every connection of the pool', () => {
      const N = 50
      const all = <T>(run: (n: number) => Promise<T>) =>
        Promise.all(Array.from({ length: N }, (_, n) => run(n)))
      const tally = (states: readonly string[]) =>
        states.reduce<Record<string, number>>((counts, state) => {
          counts[state] = (counts[state] ?? 0) + 1
          return counts
        }, {})
      // Open every connection of the pool first: else the first calls run alone on the one
      // connection open while the others are still connecting, and nothing races.
      beforeAll(async () => {
        await all(() => db.query('SELECT 1'))
      })

      test('rotateRefresh within grace: one rotated, the others reused-in-grace; one set of tokens saved', async () => {
        const s = store()
        const f = family()
        const rt = token(f.id, 'refresh_token')
        await s.issue(f, [rt], T0)
        const nexts = Array.from({ length: N }, () => [
          token(f.id, 'access_token'),
          token(f.id, 'refresh_token'),
        ])
        const results = await all((n) =>
          s.rotateRefresh(f.id, rt.tokenHash, nexts[n] ?? [], T0 + 1, { graceMs: MINUTE }),
        )
        expect(tally(results.map(({ state }) => state))).toEqual({
          rotated: 1,
          'reused-in-grace': N - 1,
        })
        const winner = nexts[results.findIndex(({ state }) => state === 'rotated')] ?? []
        const { rows } = await db.query(
          `SELECT token_hash FROM ${table('tokens')} WHERE family_id = $1 AND token_hash <> $2 ORDER BY 1`,
          [f.id, rt.tokenHash],
        )
        expect(rows.map((row) => (row as { token_hash: string }).token_hash)).toEqual(
          winner.map(({ tokenHash }) => tokenHash).sort(),
        )
        for (const t of winner) expect(await s.findToken(f.id, t.tokenHash, T0 + 2)).toBeDefined()
      })

      test('issue against revokeFamily: revoked means nothing saved, and no token outlives the mark', async () => {
        const s = store()
        const families = Array.from({ length: N }, () => family())
        const outcomes = await all(async (n) => {
          const f = families[n] ?? family()
          const at = token(f.id, 'access_token')
          const [issued] = await Promise.all([
            s.issue(f, [at], T0),
            s.revokeFamily(f.id, T0, f.expiresAt),
          ])
          return { f, at, issued }
        })
        for (const { f, at, issued } of outcomes) {
          expect(await s.findToken(f.id, at.tokenHash, T0 + 1)).toBeUndefined()
          const { rows } = await db.query(
            `SELECT count(*)::integer AS n FROM ${table('tokens')} WHERE family_id = $1`,
            [f.id],
          )
          expect(rows).toEqual([{ n: issued === 'issued' ? 1 : 0 }])
        }
      })
    })

    test('a reused refresh token revokes its family in the same statement: every token inactive', async () => {
      const s = store()
      const f = family()
      const rt = token(f.id, 'refresh_token')
      await s.issue(f, [rt], T0)
      const next = [token(f.id, 'access_token'), token(f.id, 'refresh_token')]
      const grace = { graceMs: 0 }
      expect(await s.rotateRefresh(f.id, rt.tokenHash, next, T0 + 1, grace)).toEqual({
        state: 'rotated',
        family: f,
      })
      expect(await s.findToken(f.id, next[0]?.tokenHash ?? '', T0 + 2)).toBeDefined()
      const late = [token(f.id, 'access_token')]
      expect(await s.rotateRefresh(f.id, rt.tokenHash, late, T0 + 2, grace)).toEqual({
        state: 'reused',
        family: f,
      })
      for (const t of [...next, ...late]) {
        expect(await s.findToken(f.id, t.tokenHash, T0 + 3)).toBeUndefined()
      }
      // Nothing of the reuse was saved; the family row is marked.
      const { rows } = await db.query(
        `SELECT count(*)::integer AS n FROM ${table('tokens')} WHERE token_hash = $1`,
        [late[0]?.tokenHash],
      )
      expect(rows).toEqual([{ n: 0 }])
    })

    test('issue after a revocation mark of a family that did not exist yet: revoked, nothing saved', async () => {
      const s = store()
      const f = family()
      const at = token(f.id, 'access_token')
      await s.revokeFamily(f.id, T0, T0 + 14 * DAY)
      expect(await s.issue(f, [at], T0 + 1)).toBe('revoked')
      expect(await s.findToken(f.id, at.tokenHash, T0 + 1)).toBeUndefined()
      const { rows } = await db.query(
        `SELECT count(*)::integer AS n FROM ${table('tokens')} WHERE family_id = $1`,
        [f.id],
      )
      expect(rows).toEqual([{ n: 0 }])
    })

    test('a revocation mark lasts until its retainUntil: issue is refused until then, and saves from then on', async () => {
      const s = store()
      const f = family()
      await s.revokeFamily(f.id, T0, T0 + MINUTE)
      expect(await s.issue(f, [token(f.id, 'access_token')], T0 + MINUTE - 1)).toBe('revoked')
      // From retainUntil on the mark is gone (as if purged), and the row becomes the family.
      const at = token(f.id, 'access_token', { issuedAt: T0 + MINUTE })
      expect(await s.issue(f, [at], T0 + MINUTE)).toBe('issued')
      expect(await s.findToken(f.id, at.tokenHash, T0 + MINUTE)).toEqual({ token: at, family: f })
    })

    test('the tables hold hashes and ids only, never a code or token in the clear', async () => {
      const { rows } = await db.query(
        `SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = $1 AND table_name LIKE 'api_blocks_oauth_%' ORDER BY 1, 2`,
        [schema],
      )
      const columns = rows.map((row) => (row as { column_name: string }).column_name)
      expect(columns).toContain('token_hash')
      expect(columns).toContain('code_hash')
      expect(columns.filter((name) => /^(token|code|secret|refresh_token)$/.test(name))).toEqual([])
    })

    test('purgeExpired deletes exactly what is past its time, in batches, and keeps the rest', async () => {
      const s = store()
      // Far in the future, so other tests' rows (at T0) are purged too and never counted here.
      const B = T0 + 1000 * DAY
      const oldInteraction = interaction({ createdAt: B, expiresAt: B + 1 })
      const liveInteraction = interaction({ createdAt: B, expiresAt: B + 2 * MINUTE })
      const oldCode = code({ expiresAt: B + 1 })
      const liveCode = code({ expiresAt: B + 2 * MINUTE })
      const oldFamily = family({ createdAt: B, expiresAt: B + 1 })
      const liveFamily = family({ createdAt: B, expiresAt: B + DAY })
      const oldAccess = token(liveFamily.id, 'access_token', { issuedAt: B, expiresAt: B + 1 })
      const liveRefresh = token(liveFamily.id, 'refresh_token', { issuedAt: B, expiresAt: B + DAY })
      const markGone = id()
      const markKept = id()
      await s.purgeExpired(B) // what the other tests left, all of it before B
      for (const i of [oldInteraction, liveInteraction]) await s.saveInteraction(i)
      for (const c of [oldCode, liveCode]) await s.saveCode(c)
      await s.consumeCode(liveCode.codeHash, B) // consumed, kept until it expires: a replay is seen
      await s.issue(oldFamily, [token(oldFamily.id, 'access_token', { expiresAt: B + 1 })], B)
      await s.issue(liveFamily, [oldAccess, liveRefresh], B)
      await s.revokeFamily(markGone, B, B + 1)
      await s.revokeFamily(markKept, B, B + DAY)
      await s.remember(`old-${markGone}`, B + 1, B)
      await s.remember(`live-${markKept}`, B + DAY, B)

      const now = B + MINUTE
      // One interaction, one code, two families (one a mark), two tokens, one key.
      expect(await s.purgeExpired(now, { batchSize: 1 })).toBe(7)
      expect(await s.purgeExpired(now)).toBe(0)

      expect(await s.findInteraction(liveInteraction.id, now)).toEqual(liveInteraction)
      expect((await s.consumeCode(liveCode.codeHash, now)).state).toBe('replayed')
      expect(await s.findToken(liveFamily.id, liveRefresh.tokenHash, now)).toBeDefined()
      expect(await s.remember(`live-${markKept}`, B + DAY, now)).toBe(false)
      expect(await s.issue(family({ id: markKept }), [], now)).toBe('revoked')
      const left = async (name: string, column: string, keys: string[]) => {
        const { rows } = await db.query(
          `SELECT ${column} AS k FROM ${table(name)} WHERE ${column} = ANY($1) ORDER BY 1`,
          [keys],
        )
        return rows.map((row) => (row as { k: string }).k)
      }
      expect(await left('interactions', 'id', [oldInteraction.id, liveInteraction.id])).toEqual([
        liveInteraction.id,
      ])
      expect(await left('codes', 'code_hash', [oldCode.codeHash, liveCode.codeHash])).toEqual([
        liveCode.codeHash,
      ])
      expect(
        await left('families', 'id', [oldFamily.id, liveFamily.id, markGone, markKept]),
      ).toEqual([liveFamily.id, markKept].sort())
      expect(
        await left('tokens', 'token_hash', [oldAccess.tokenHash, liveRefresh.tokenHash]),
      ).toEqual([liveRefresh.tokenHash])
      expect(await left('replay_cache', 'key', [`old-${markGone}`, `live-${markKept}`])).toEqual([
        `live-${markKept}`,
      ])
    })

    test('purgeExpired stops after maxBatches and the next call carries on', async () => {
      const s = store()
      // Time 2: only these five (expired at 2) are past; other tests write at T0 and later.
      for (let n = 0; n < 5; n++) await s.remember(`purge-${id()}`, 2, 1)
      expect(await s.purgeExpired(2, { batchSize: 2, maxBatches: 2 })).toBe(4)
      expect(await s.purgeExpired(2, { batchSize: 2, maxBatches: 2 })).toBe(1)
    })

    test('withDb: a revocation on a transaction commits and rolls back with it', async () => {
      const pooled = 'connect' in db ? await (db as pg.Pool).connect() : undefined
      const conn: Queryable = pooled ?? db
      try {
        const s = store()
        const bound = s.withDb(conn)
        expect(bound.db).toBe(conn)
        const f = family()
        const at = token(f.id, 'access_token')
        await s.issue(f, [at], T0)
        await conn.query('BEGIN')
        await bound.revokeFamily(f.id, T0, f.expiresAt)
        await conn.query('ROLLBACK')
        expect(await s.findToken(f.id, at.tokenHash, T0)).toBeDefined()
        await conn.query('BEGIN')
        await bound.revokeFamily(f.id, T0, f.expiresAt)
        await conn.query('COMMIT')
        expect(await s.findToken(f.id, at.tokenHash, T0)).toBeUndefined()
        expect(() => s.withDb({} as Queryable)).toThrow(TypeError)
      } finally {
        pooled?.release()
      }
    })

    test('a schema that was never migrated rejects with NOT_MIGRATED', async () => {
      const unmigrated = new PostgresOAuthStore({ db, schema: testSchema() })
      await expect(unmigrated.findToken('f', 'h', T0)).rejects.toMatchObject({
        code: 'NOT_MIGRATED',
        operation: 'oauth.findToken',
      })
    })
  })
}
