import type { IdempotencyStore, StoredResponse } from '@api-blocks/idempotency'
import { idempotency } from '@api-blocks/idempotency'
import { runIdempotencyStoreConformance } from '@api-blocks/idempotency/testing'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { commandsSentBy } from '../test/commands.ts'
import { clientOptions, deletePrefix, redisUrl, serverSuite, testPrefix } from '../test/server.ts'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import { RedisIdempotencyStore } from './idempotency-store.ts'
import { CLAIM } from './internal/idempotency-scripts.ts'

const T0 = 1_700_000_000_000
const LEASE = 30_000
const RETENTION = 24 * 60 * 60 * 1000
const response: StoredResponse = {
  status: 201,
  headers: [['content-type', 'application/octet-stream']],
  body: new Uint8Array([0, 255, 10, 13]),
}

/** A client that answers every script call with `reply`. */
function answering(reply: unknown): RedisScriptClient {
  return { evalSha: async () => reply, eval: async () => reply }
}

describe('RedisIdempotencyStore without a server', () => {
  test('the constructor refuses a client without evalSha/eval and a negative grace', () => {
    expect(() => new RedisIdempotencyStore({ client: {} as RedisScriptClient })).toThrow(TypeError)
    expect(() => new RedisIdempotencyStore({ client: answering('1'), ttlGraceMs: -1 })).toThrow(
      RangeError,
    )
  })

  test('on NOSCRIPT it sends the source with EVAL, keys prefixed', async () => {
    const calls: string[] = []
    const client: RedisScriptClient = {
      evalSha: async (sha1, call) => {
        calls.push(`EVALSHA ${sha1 === CLAIM.sha1} ${call.keys.join()}`)
        throw new Error('NOSCRIPT No matching script. Please use EVAL.')
      },
      eval: async (script, call) => {
        calls.push(`EVAL ${script === CLAIM.source} ${call.keys.join()}`)
        return ['claimed']
      },
    }
    const store = new RedisIdempotencyStore({ client, prefix: 'p:' })
    const result = await store.claim('k', { fingerprint: 'f', owner: 'o', leaseMs: 1, now: T0 })
    expect(result).toEqual({ state: 'claimed' })
    expect(calls).toEqual(['EVALSHA true p:k', 'EVAL true p:k'])
  })

  test('a client error rejects with RedisStoreError COMMAND_FAILED, the error as cause', async () => {
    const failure = new Error('Socket closed unexpectedly')
    const store = new RedisIdempotencyStore({
      client: { evalSha: () => Promise.reject(failure), eval: () => Promise.reject(failure) },
    })
    const error = await store.release('k', 'o').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RedisStoreError)
    expect(error).toMatchObject({ code: 'COMMAND_FAILED', operation: 'idempotency.release' })
    expect((error as RedisStoreError).cause).toBe(failure)
    expect((error as RedisStoreError).toProblem().status).toBe(503)
  })

  test('a reply of an unknown shape rejects with UNEXPECTED_REPLY', async () => {
    const claim = { fingerprint: 'f', owner: 'o', leaseMs: 1, now: T0 }
    for (const reply of [42, ['in-flight', 'soon'], ['completed'], ['lost']]) {
      await expect(
        new RedisIdempotencyStore({ client: answering(reply) }).claim('k', claim),
      ).rejects.toMatchObject({
        code: 'UNEXPECTED_REPLY',
      })
    }
    await expect(
      new RedisIdempotencyStore({ client: answering(1) }).release('k', 'o'),
    ).rejects.toMatchObject({ code: 'UNEXPECTED_REPLY', operation: 'idempotency.release' })
  })

  test('replies as Buffers (a client mapping blob strings to Buffer) are read as text', async () => {
    const store = new RedisIdempotencyStore({
      client: answering([Buffer.from('in-flight'), Buffer.from(String(T0 + LEASE))]),
    })
    expect(
      await store.claim('k', { fingerprint: 'f', owner: 'o', leaseMs: LEASE, now: T0 }),
    ).toEqual({ state: 'in-flight', leaseExpiresAt: T0 + LEASE })
  })

  test('a time that is not a finite number is refused before anything is sent', async () => {
    const store = new RedisIdempotencyStore({ client: answering(['claimed']) })
    await expect(
      store.claim('k', { fingerprint: 'f', owner: 'o', leaseMs: 1, now: Number.NaN }),
    ).rejects.toThrow(TypeError)
  })
})

describe.skipIf(redisUrl === undefined)(serverSuite('RedisIdempotencyStore on Redis'), () => {
  const client = createClient(clientOptions)
  client.on('error', () => {}) // failures reach the tests as rejections
  const prefixes: string[] = []
  const newStore = (options: { ttlGraceMs?: number } = {}) => {
    const prefix = testPrefix('idempotency')
    prefixes.push(prefix)
    return new RedisIdempotencyStore({ client, prefix, ...options })
  }

  beforeAll(async () => {
    await client.connect()
  })
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(client, prefix)
    client.destroy()
  })

  runIdempotencyStoreConformance('RedisIdempotencyStore', () => newStore(), {
    concurrency: 100,
    cleanup: async (store: IdempotencyStore) => {
      await deletePrefix(client, (store as RedisIdempotencyStore).prefix)
    },
  })

  test('every operation is ONE round trip (one EVALSHA), whatever it finds', async () => {
    const store = newStore()
    const claim = (owner: string, now: number) =>
      store.claim('k', { fingerprint: 'f', owner, leaseMs: LEASE, now })
    // Prime the server's script cache, so the counts below are the steady state.
    await store.claim('warm', { fingerprint: 'f', owner: 'o', leaseMs: LEASE, now: T0 })
    await store.complete('warm', 'o', { response, retentionMs: RETENTION, now: T0 })
    await store.checkpoint('warm', 'o', { recoveryPoint: 'p', retentionMs: RETENTION, now: T0 })
    await store.release('warm', 'o')

    const steps: [string, () => Promise<unknown>][] = [
      ['claim (absent)', () => claim('a', T0)],
      ['claim (in flight)', () => claim('b', T0 + 1)],
      [
        'checkpoint',
        () =>
          store.checkpoint('k', 'a', {
            recoveryPoint: 'charged',
            retentionMs: RETENTION,
            now: T0 + 2,
          }),
      ],
      ['release', () => store.release('k', 'a')],
      ['claim (resumable)', () => claim('c', T0 + 3)],
      [
        'complete',
        () => store.complete('k', 'c', { response, retentionMs: RETENTION, now: T0 + 4 }),
      ],
      ['claim (completed: replay)', () => claim('d', T0 + 5)],
    ]
    for (const [step, run] of steps) {
      expect({ step, commands: await commandsSentBy(client, run) }).toEqual({
        step,
        commands: ['EVALSHA'],
      })
    }
  })

  test('after SCRIPT FLUSH one call falls back to EVAL (two round trips), then EVALSHA again', async () => {
    const store = newStore()
    // Other files may run scripts on this server meanwhile: they fall back the same way.
    await client.scriptFlush()
    const first = await commandsSentBy(client, () =>
      store.claim('k', { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: T0 }),
    )
    expect(first).toEqual(['EVALSHA', 'EVAL'])
    const second = await commandsSentBy(client, () =>
      store.claim('k', { fingerprint: 'f', owner: 'b', leaseMs: LEASE, now: T0 }),
    )
    expect(second).toEqual(['EVALSHA'])
  })

  test('PEXPIRE is the logical time left plus the grace, relative to now (not the server clock)', async () => {
    const grace = 5_000
    const store = newStore({ ttlGraceMs: grace })
    const key = `${store.prefix}k`
    /** The server's clock around `body`, and the key's absolute expiry after it. */
    const expiryAround = async (body: () => Promise<unknown>) => {
      const before = await serverTime()
      await body()
      const after = await serverTime()
      return { before, after, at: await client.pExpireTime(key) }
    }
    const serverTime = async () => {
      const [seconds, micros] = (await client.time()) as unknown as [string, string]
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    }
    // Logical time far in the past (T0): an absolute expiry would drop the key at once.
    const claimed = await expiryAround(() =>
      store.claim('k', { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: T0 }),
    )
    expect(claimed.at).toBeGreaterThanOrEqual(claimed.before + LEASE + grace)
    expect(claimed.at).toBeLessThanOrEqual(claimed.after + LEASE + grace + 1)

    const checkpointed = await expiryAround(() =>
      store.checkpoint('k', 'a', { recoveryPoint: 'p', retentionMs: 60_000, now: T0 + 10 }),
    )
    // The record now ends with its retention: 60 s after T0 + 10.
    expect(checkpointed.at).toBeGreaterThanOrEqual(checkpointed.before + 60_000 + grace)
    expect(checkpointed.at).toBeLessThanOrEqual(checkpointed.after + 60_000 + grace + 1)

    const completed = await expiryAround(() =>
      store.complete('k', 'a', { response, retentionMs: RETENTION, now: T0 + 20 }),
    )
    expect(completed.at).toBeGreaterThanOrEqual(completed.before + RETENTION + grace)
    expect(completed.at).toBeLessThanOrEqual(completed.after + RETENTION + grace + 1)
  })

  test('a record is one hash; the body is stored as base64 text, binary-safe', async () => {
    const store = newStore()
    await store.claim('k', { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: T0 })
    await store.complete('k', 'a', { response, retentionMs: RETENTION, now: T0 + 1 })
    const hash = await client.hGetAll(`${store.prefix}k`)
    expect(hash).toEqual({
      s: 'completed',
      f: 'f',
      o: 'a',
      l: String(T0 + LEASE),
      e: String(T0 + 1 + RETENTION),
      r: '{"v":1,"status":201,"headers":[["content-type","application/octet-stream"]],"body":"AP8KDQ=="}',
    })
  })

  test('a corrupt stored response rejects with UNEXPECTED_REPLY (the middleware answers 503)', async () => {
    const store = newStore()
    await client.hSet(`${store.prefix}k`, {
      s: 'completed',
      f: 'f',
      o: 'a',
      l: '0',
      e: String(T0 + RETENTION),
      r: 'not json',
    })
    await expect(
      store.claim('k', { fingerprint: 'f', owner: 'b', leaseMs: LEASE, now: T0 }),
    ).rejects.toMatchObject({ code: 'UNEXPECTED_REPLY', operation: 'idempotency.claim' })
  })

  test('a key of another type rejects with COMMAND_FAILED (WRONGTYPE), and is left alone', async () => {
    const store = newStore()
    await client.set(`${store.prefix}k`, 'not a hash')
    const error = await store
      .claim('k', { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: T0 })
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'COMMAND_FAILED' })
    expect(String((error as RedisStoreError).cause)).toMatch(/WRONGTYPE/)
    expect(await client.get(`${store.prefix}k`)).toBe('not a hash')
  })

  test('a RESP2 client gets the same answers (node-redis 6 defaults to RESP3)', async () => {
    const resp2 = createClient({ ...clientOptions, RESP: 2 })
    resp2.on('error', () => {})
    await resp2.connect()
    try {
      const store = new RedisIdempotencyStore({ client: resp2, prefix: testPrefix('resp2') })
      prefixes.push(store.prefix)
      const claim = (owner: string, now: number) =>
        store.claim('k', { fingerprint: 'f', owner, leaseMs: LEASE, now })
      expect(await claim('a', T0)).toEqual({ state: 'claimed' })
      expect(await claim('b', T0 + 1)).toEqual({ state: 'in-flight', leaseExpiresAt: T0 + LEASE })
      expect(
        await store.checkpoint('k', 'a', {
          recoveryPoint: 'p',
          retentionMs: RETENTION,
          now: T0 + 2,
        }),
      ).toBe(true)
      expect(await store.release('k', 'a')).toBe(true)
      expect(await claim('c', T0 + 3)).toEqual({ state: 'claimed', recoveryPoint: 'p' })
      expect(
        await store.complete('k', 'c', { response, retentionMs: RETENTION, now: T0 + 4 }),
      ).toBe(true)
      const replay = await claim('d', T0 + 5)
      expect(replay.state === 'completed' && [...replay.response.body]).toEqual([...response.body])
      expect(await store.release('k', 'c')).toBe(false)
    } finally {
      resp2.destroy()
    }
  })

  test('a disconnected client: the operation rejects, and the middleware answers 503 without running the handler', async () => {
    const closed = createClient(clientOptions)
    closed.on('error', () => {})
    await closed.connect()
    closed.destroy()
    const store = new RedisIdempotencyStore({ client: closed, prefix: testPrefix('closed') })
    const error = await store
      .claim('k', { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: T0 })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RedisStoreError)
    expect(error).toMatchObject({ code: 'COMMAND_FAILED', operation: 'idempotency.claim' })
    expect((error as RedisStoreError).cause).toBeInstanceOf(Error)

    let ran = 0
    const middleware = idempotency({ store, scope: 'tenant' })
    const answer = await middleware(
      new Request('https://api.example/v1/orders', {
        method: 'POST',
        headers: { 'idempotency-key': 'k1', 'content-type': 'application/json' },
        body: '{}',
      }),
      async () => {
        ran++
        return new Response(null, { status: 201 })
      },
    )
    expect(answer.status).toBe(503)
    expect(ran).toBe(0)
  })
})
