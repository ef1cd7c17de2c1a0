import type { FamilyRecord, OAuthStore, TokenRecord } from '@api-blocks/oauth'
import { runOAuthStoreConformance } from '@api-blocks/oauth/testing'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { commandsSentBy } from '../test/commands.ts'
import { clientOptions, deletePrefix, redisUrl, serverSuite, testPrefix } from '../test/server.ts'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import { ISSUE } from './internal/oauth-scripts.ts'
import { RedisOAuthStore } from './oauth-store.ts'

const T0 = 1_700_000_000_000
const DAY = 24 * 60 * 60 * 1000

const family: FamilyRecord = {
  id: 'fam1ly-1d_AAAAAAAAAAAAA',
  clientId: 'client-1',
  subject: 'user-1',
  scopes: ['read:orders', 'offline_access'],
  resource: 'https://api.example/',
  createdAt: T0,
  expiresAt: T0 + 14 * DAY,
}
const token = (kind: TokenRecord['kind'], tokenHash: string): TokenRecord => ({
  tokenHash,
  kind,
  familyId: family.id,
  jti: `jti-${tokenHash}`,
  issuedAt: T0,
  expiresAt: kind === 'access_token' ? T0 + 900_000 : family.expiresAt,
})

/** A client that answers every script call with `reply`. */
function answering(reply: unknown): RedisScriptClient {
  return { evalSha: async () => reply, eval: async () => reply }
}

describe('RedisOAuthStore without a server', () => {
  test('the constructor refuses a client without evalSha/eval, a prefix not a string, a negative grace', () => {
    expect(() => new RedisOAuthStore({ client: {} as RedisScriptClient })).toThrow(TypeError)
    expect(
      () => new RedisOAuthStore({ client: answering(1), prefix: 1 as unknown as string }),
    ).toThrow(TypeError)
    expect(() => new RedisOAuthStore({ client: answering(1), ttlGraceMs: -1 })).toThrow(RangeError)
  })

  test('the constructor refuses a prefix with a brace, which would become the cluster hash tag of every key', () => {
    for (const prefix of ['app:{oauth}:', 'app{', 'app}', '{']) {
      expect(() => new RedisOAuthStore({ client: answering(1), prefix })).toThrow(
        /must not contain \{ or \}/,
      )
    }
    expect(new RedisOAuthStore({ client: answering(1), prefix: 'app:oauth:' }).prefix).toBe(
      'app:oauth:',
    )
  })

  test('on NOSCRIPT it sends the source with EVAL; a family and its tokens share the hash tag', async () => {
    const calls: string[] = []
    const client: RedisScriptClient = {
      evalSha: async (sha1, call) => {
        calls.push(`EVALSHA ${sha1 === ISSUE.sha1} ${call.keys.join(' ')}`)
        throw new Error('NOSCRIPT No matching script. Please use EVAL.')
      },
      eval: async (script, call) => {
        calls.push(`EVAL ${script === ISSUE.source} ${call.keys.join(' ')}`)
        return 'issued'
      },
    }
    const store = new RedisOAuthStore({ client, prefix: 'p:' })
    expect(await store.issue(family, [token('access_token', 'h1')], T0)).toBe('issued')
    const keys = `p:f:{${family.id}} p:t:{${family.id}}:h1`
    expect(calls).toEqual([`EVALSHA true ${keys}`, `EVAL true ${keys}`])
  })

  test('a client error rejects with RedisStoreError COMMAND_FAILED, the error as cause', async () => {
    const failure = new Error('Socket closed unexpectedly')
    const store = new RedisOAuthStore({
      client: { evalSha: () => Promise.reject(failure), eval: () => Promise.reject(failure) },
    })
    const error = await store.consumeCode('h', T0).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RedisStoreError)
    expect(error).toMatchObject({ code: 'COMMAND_FAILED', operation: 'oauth.consumeCode' })
    expect((error as RedisStoreError).cause).toBe(failure)
    expect((error as RedisStoreError).toProblem().status).toBe(503)
  })

  test('a reply of an unknown shape, or a record that does not parse, rejects with UNEXPECTED_REPLY', async () => {
    const cases: [unknown, (store: RedisOAuthStore) => Promise<unknown>][] = [
      [['lost'], (store) => store.consumeCode('h', T0)],
      [['consumed'], (store) => store.consumeCode('h', T0)],
      [['consumed', 'not json'], (store) => store.consumeCode('h', T0)],
      [['consumed', '[1]'], (store) => store.consumeCode('h', T0)],
      ['maybe', (store) => store.issue(family, [], T0)],
      [['rotated'], (store) => store.rotateRefresh(family.id, 'h', [], T0, { graceMs: 0 })],
      [['stolen'], (store) => store.rotateRefresh(family.id, 'h', [], T0, { graceMs: 0 })],
      [['{}'], (store) => store.findToken(family.id, 'h', T0)],
      [42, (store) => store.findInteraction('i', T0)],
      [2, (store) => store.remember('k', T0 + 1, T0)],
    ]
    for (const [reply, call] of cases) {
      await expect(call(new RedisOAuthStore({ client: answering(reply) }))).rejects.toMatchObject({
        code: 'UNEXPECTED_REPLY',
      })
    }
  })

  test('replies as Buffers (a client mapping blob strings to Buffer) are read as text', async () => {
    const store = new RedisOAuthStore({
      client: answering([Buffer.from('reused'), Buffer.from(JSON.stringify(family))]),
    })
    expect(await store.rotateRefresh(family.id, 'h', [], T0, { graceMs: 0 })).toEqual({
      state: 'reused',
      family,
    })
  })

  test('a time that is not a finite number is refused before anything is sent', async () => {
    let sent = 0
    const store = new RedisOAuthStore({
      client: {
        evalSha: async () => {
          sent++
          return 1
        },
        eval: async () => 1,
      },
    })
    await expect(store.remember('k', Number.NaN, T0)).rejects.toThrow(TypeError)
    await expect(store.findToken(family.id, 'h', Number.POSITIVE_INFINITY)).rejects.toThrow(
      TypeError,
    )
    expect(sent).toBe(0)
  })
})

describe.skipIf(redisUrl === undefined)(serverSuite('RedisOAuthStore on Redis'), () => {
  const client = createClient(clientOptions)
  client.on('error', () => {}) // failures reach the tests as rejections
  const prefixes: string[] = []
  const newStore = (options: { ttlGraceMs?: number } = {}) => {
    const prefix = testPrefix('oauth')
    prefixes.push(prefix)
    return new RedisOAuthStore({ client, prefix, ...options })
  }
  const serverTime = async () => {
    const [seconds, micros] = (await client.time()) as unknown as [string, string]
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  }

  beforeAll(async () => {
    await client.connect()
  })
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(client, prefix)
    client.destroy()
  })

  runOAuthStoreConformance('RedisOAuthStore', () => newStore(), {
    concurrency: 100,
    cleanup: async (store: OAuthStore) => {
      await deletePrefix(client, (store as RedisOAuthStore).prefix)
    },
  })

  test('every method is ONE round trip (one EVALSHA), whatever it finds', async () => {
    const store = newStore()
    const access = token('access_token', 'a1')
    const refresh = token('refresh_token', 'r1')
    const next = [token('access_token', 'a2'), token('refresh_token', 'r2')]
    const interaction = {
      id: 'i1',
      clientId: 'client-1',
      redirectUri: 'https://client.example/cb',
      scopes: ['read:orders'],
      state: 's',
      codeChallenge: 'c',
      resource: 'https://api.example/',
      bindingHash: 'b',
      createdAt: T0,
      expiresAt: T0 + 600_000,
    }
    const code = {
      codeHash: 'c1',
      clientId: 'client-1',
      redirectUri: 'https://client.example/cb',
      subject: 'user-1',
      scopes: ['read:orders'],
      codeChallenge: 'c',
      authTime: T0 / 1000,
      resource: 'https://api.example/',
      familyId: family.id,
      expiresAt: T0 + 60_000,
    }
    const steps: [string, () => Promise<unknown>][] = [
      ['saveInteraction', () => store.saveInteraction(interaction)],
      ['findInteraction', () => store.findInteraction('i1', T0)],
      ['takeInteraction', () => store.takeInteraction('i1', T0)],
      ['saveCode', () => store.saveCode(code)],
      ['consumeCode', () => store.consumeCode('c1', T0)],
      ['issue', () => store.issue(family, [access, refresh], T0)],
      ['findToken', () => store.findToken(family.id, 'a1', T0)],
      ['rotateRefresh', () => store.rotateRefresh(family.id, 'r1', next, T0, { graceMs: 0 })],
      ['revokeToken', () => store.revokeToken(family.id, 'a2', T0)],
      ['revokeFamily', () => store.revokeFamily(family.id, T0, family.expiresAt)],
      ['remember', () => store.remember('k', T0 + 1000, T0)],
    ]
    // Prime the server's script cache, so the counts below are the steady state.
    for (const [, run] of steps) await run()
    await deletePrefix(client, store.prefix)
    for (const [step, run] of steps) {
      expect({ step, commands: await commandsSentBy(client, run) }).toEqual({
        step,
        commands: ['EVALSHA'],
      })
    }
  })

  test('time to live: the logical time left plus the grace, relative to now; a revocation never shortens it', async () => {
    const grace = 5_000
    const store = newStore({ ttlGraceMs: grace })
    const familyKey = `${store.prefix}f:{${family.id}}`
    const accessKey = `${store.prefix}t:{${family.id}}:a1`
    const before = await serverTime()
    // Logical time far in the past (T0): an absolute expiry would drop the keys at once.
    await store.issue(family, [token('access_token', 'a1')], T0 + 1_000)
    const after = await serverTime()
    const familyLeft = family.expiresAt - (T0 + 1_000) + grace
    expect(await client.pExpireTime(familyKey)).toBeGreaterThanOrEqual(before + familyLeft)
    expect(await client.pExpireTime(familyKey)).toBeLessThanOrEqual(after + familyLeft + 1)
    const accessLeft = T0 + 900_000 - (T0 + 1_000) + grace
    expect(await client.pExpireTime(accessKey)).toBeGreaterThanOrEqual(before + accessLeft)
    expect(await client.pExpireTime(accessKey)).toBeLessThanOrEqual(after + accessLeft + 1)

    // A revocation kept until 30 days: the family key lives on; a later, shorter one keeps it.
    await store.revokeFamily(family.id, T0 + 1_000, T0 + 30 * DAY)
    const marked = await client.pExpireTime(familyKey)
    expect(marked).toBeGreaterThanOrEqual(before + 30 * DAY - 1_000 + grace)
    await store.revokeFamily(family.id, T0 + 1_000, T0 + 2_000)
    // (Counted again from the server's clock of this call: it may only move later.)
    expect(await client.pExpireTime(familyKey)).toBeGreaterThanOrEqual(marked)
  })

  test('a code lives from the latest now the store saw (or its authTime): never shorter than its life', async () => {
    const store = newStore({ ttlGraceMs: 0 })
    const code = {
      codeHash: 'c1',
      clientId: 'client-1',
      redirectUri: 'https://client.example/cb',
      subject: 'user-1',
      scopes: ['read:orders'],
      codeChallenge: 'c',
      authTime: T0 / 1000 - 3600,
      resource: 'https://api.example/',
      familyId: family.id,
      expiresAt: T0 + 60_000,
    }
    // Only the authTime is known: an hour and a minute, longer than needed, never shorter.
    await store.saveCode(code)
    expect(await client.pTTL(`${store.prefix}c:c1`)).toBeGreaterThan(3_600_000)
    // After a call at T0 (what completeInteraction makes just before saveCode): one minute.
    await store.findInteraction('none', T0)
    await store.saveCode({ ...code, codeHash: 'c2' })
    const ttl = await client.pTTL(`${store.prefix}c:c2`)
    expect(ttl).toBeGreaterThan(55_000)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })

  test('only hashes are stored: a token key holds its record, expiry and kind, and no key is made for an unknown token', async () => {
    const store = newStore()
    const access = token('access_token', 'a1')
    await store.issue(family, [access], T0)
    expect(await client.hGetAll(`${store.prefix}t:{${family.id}}:a1`)).toEqual({
      r: JSON.stringify(access),
      e: String(access.expiresAt),
      k: 'access_token',
    })
    await store.revokeToken(family.id, 'unknown', T0)
    expect(await client.exists(`${store.prefix}t:{${family.id}}:unknown`)).toBe(0)
  })

  test('a corrupt stored record rejects with UNEXPECTED_REPLY', async () => {
    const store = newStore()
    await client.hSet(`${store.prefix}c:c1`, { r: 'not json', e: String(T0 + 60_000) })
    await expect(store.consumeCode('c1', T0)).rejects.toMatchObject({
      code: 'UNEXPECTED_REPLY',
      operation: 'oauth.consumeCode',
    })
  })

  test('a RESP2 client gets the same answers (node-redis 6 defaults to RESP3)', async () => {
    const resp2 = createClient({ ...clientOptions, RESP: 2 })
    resp2.on('error', () => {})
    await resp2.connect()
    try {
      const store = new RedisOAuthStore({ client: resp2, prefix: testPrefix('oauth-resp2') })
      prefixes.push(store.prefix)
      const access = token('access_token', 'a1')
      const refresh = token('refresh_token', 'r1')
      expect(await store.issue(family, [access, refresh], T0)).toBe('issued')
      expect(await store.findToken(family.id, 'a1', T0)).toEqual({ token: access, family })
      expect(await store.findToken(family.id, 'zz', T0)).toBeUndefined()
      expect(await store.rotateRefresh(family.id, 'r1', [], T0, { graceMs: 0 })).toEqual({
        state: 'rotated',
        family,
      })
      expect(await store.rotateRefresh(family.id, 'r1', [], T0, { graceMs: 0 })).toEqual({
        state: 'reused',
        family,
      })
      expect(await store.remember('k', T0 + 1, T0)).toBe(true)
      expect(await store.remember('k', T0 + 1, T0)).toBe(false)
      expect(await store.findInteraction('none', T0)).toBeUndefined()
    } finally {
      resp2.destroy()
    }
  })

  test('a disconnected client: every method rejects with COMMAND_FAILED', async () => {
    const closed = createClient(clientOptions)
    closed.on('error', () => {})
    await closed.connect()
    closed.destroy()
    const store = new RedisOAuthStore({ client: closed, prefix: testPrefix('closed') })
    const error = await store.findToken(family.id, 'a1', T0).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RedisStoreError)
    expect(error).toMatchObject({ code: 'COMMAND_FAILED', operation: 'oauth.findToken' })
  })
})
