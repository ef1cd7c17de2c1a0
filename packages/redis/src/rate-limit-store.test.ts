import type { GcraCheck } from '@api-blocks/rate-limit'
import {
  compilePolicies,
  createRateLimiter,
  gcraCheck,
  MAX_LIMIT_TICKS,
  RateLimitError,
} from '@api-blocks/rate-limit'
import { runRateLimitStoreConformance } from '@api-blocks/rate-limit/testing'
import { createClient, RESP_TYPES } from 'redis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { commandsSentBy } from '../test/commands.ts'
import { clientOptions, deletePrefix, redisUrl, serverSuite, testPrefix } from '../test/server.ts'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import { RedisRateLimitStore } from './rate-limit-store.ts'

const T0 = 1_700_000_000_000
const policies = compilePolicies([
  { name: 'burst', quota: 3, windowSeconds: 1 },
  { name: 'daily', quota: 1000, windowSeconds: 86_400 },
])

function answering(reply: unknown): RedisScriptClient {
  return { evalSha: async () => reply, eval: async () => reply }
}

describe('RedisRateLimitStore without a server', () => {
  test('the constructor refuses a client without evalSha/eval', () => {
    expect(() => new RedisRateLimitStore({ client: {} as RedisScriptClient })).toThrow(TypeError)
  })

  test('a reply of an unknown shape rejects with unexpected_reply', async () => {
    const check: GcraCheck = { key: 'k', policies, cost: 1, now: T0 }
    for (const reply of [
      null,
      ['1', '0'],
      ['yes', '0', '0'],
      ['1', '-1', '0'],
      ['1', '0.5', '0'],
    ]) {
      await expect(
        new RedisRateLimitStore({ client: answering(reply) }).consume(check),
      ).rejects.toMatchObject({
        code: 'UNEXPECTED_REPLY',
        operation: 'rate-limit.consume',
      })
    }
  })

  test('a policy compilePolicies did not make (limitTicks is not quota * emissionTicks) is refused', async () => {
    const [burst] = policies
    const forged = { ...burst!, limitTicks: burst!.limitTicks + 1 }
    const store = new RedisRateLimitStore({ client: answering(0) })
    await expect(store.consume({ key: 'k', policies: [forged], cost: 1, now: T0 })).rejects.toThrow(
      RangeError,
    )
  })

  test('one policy: one integer reply, d when allowed and -1 - d when denied', async () => {
    const [burst] = policies
    const check: GcraCheck = { key: 'k', policies: [burst!], cost: 1, now: T0 }
    const replies: [unknown, boolean, number][] = [
      [0, true, 0],
      [2000, true, 2000],
      [-1, false, 0],
      [-3001, false, 3000],
      ['-3001', false, 3000],
      [3000n, true, 3000],
    ]
    for (const [reply, allowed, debt] of replies) {
      const store = new RedisRateLimitStore({ client: answering(reply) })
      expect(await store.consume(check)).toEqual({ allowed, debts: [debt] })
    }
    for (const reply of [null, [1, 0], '1.5', 'yes', 2 ** 53, Number.NaN]) {
      await expect(
        new RedisRateLimitStore({ client: answering(reply) }).consume(check),
      ).rejects.toMatchObject({ code: 'UNEXPECTED_REPLY' })
    }
  })

  test('a store failure reaches the limiter as STORE_UNAVAILABLE, the RedisStoreError as cause', async () => {
    const failure = new Error('The client is closed')
    const store = new RedisRateLimitStore({
      client: { evalSha: () => Promise.reject(failure), eval: () => Promise.reject(failure) },
    })
    const limiter = createRateLimiter({
      store,
      policies: [{ name: 'p', quota: 1, windowSeconds: 1 }],
    })
    const error = await limiter.check('k').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RateLimitError)
    expect((error as RateLimitError).code).toBe('STORE_UNAVAILABLE')
    const cause = (error as RateLimitError).cause
    expect(cause).toBeInstanceOf(RedisStoreError)
    expect((cause as RedisStoreError).cause).toBe(failure)
  })

  test('a time or cost that is not a whole number is refused before anything is sent', async () => {
    const store = new RedisRateLimitStore({ client: answering(['1', '0', '0']) })
    await expect(store.consume({ key: 'k', policies, cost: 1, now: 1.5 })).rejects.toThrow(
      RangeError,
    )
    await expect(store.consume({ key: 'k', policies, cost: -1, now: T0 })).rejects.toThrow(
      RangeError,
    )
  })
})

describe.skipIf(redisUrl === undefined)(serverSuite('RedisRateLimitStore on Redis'), () => {
  const client = createClient(clientOptions)
  client.on('error', () => {})
  const prefixes: string[] = []
  const newStore = () => {
    const prefix = testPrefix('rate-limit')
    prefixes.push(prefix)
    return new RedisRateLimitStore({ client, prefix })
  }

  beforeAll(async () => {
    await client.connect()
  })
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(client, prefix)
    client.destroy()
  })

  // The stored states, each field 16 bytes (two little-endian doubles), shown as "<tat>:<frac>".
  const storedStates = async (key: string) => {
    const fields = await client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }).hGetAll(key)
    const states: Record<string, string> = {}
    for (const [name, value] of Object.entries(fields as Record<string, Buffer>)) {
      expect(value).toHaveLength(16)
      states[name] = `${value.readDoubleLE(0)}:${value.readDoubleLE(8)}`
    }
    return states
  }

  runRateLimitStoreConformance('RedisRateLimitStore conformance', () => newStore(), {
    concurrency: 100,
    close: async (store) => {
      await deletePrefix(client, store.prefix)
    },
  })

  test('consume and reset are ONE round trip (one EVALSHA), allowed, denied or free', async () => {
    const store = newStore()
    await store.consume({ key: 'warm', policies, cost: 1, now: T0 })
    await store.reset('warm')
    const steps: [string, () => Promise<unknown>][] = [
      ['allowed', () => store.consume({ key: 'k', policies, cost: 3, now: T0 })],
      ['denied', () => store.consume({ key: 'k', policies, cost: 1, now: T0 })],
      ['cost 0', () => store.consume({ key: 'k', policies, cost: 0, now: T0 })],
      ['reset', () => store.reset('k')],
    ]
    for (const [step, run] of steps) {
      expect({ step, commands: await commandsSentBy(client, run) }).toEqual({
        step,
        commands: ['EVALSHA'],
      })
    }
  })

  test('the key expires when its last debt is paid: PEXPIRE relative to now, extended never shortened', async () => {
    const store = newStore()
    const key = `${store.prefix}k`
    const serverTime = async () => {
      const [seconds, micros] = (await client.time()) as unknown as [string, string]
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    }
    // burst: 3 per 1000 ms (q = 3, e = 1000 ticks); daily: 1000 per day (q = 1, e = 86,400).
    // Cost 2 at T0: burst paid in 2000/3 ms (666 and 2/3: 667 with the fraction), daily in 172,800 ms.
    const before = await serverTime()
    const reply = await store.consume({ key: 'k', policies, cost: 2, now: T0 })
    const after = await serverTime()
    expect(reply).toEqual({ allowed: true, debts: [2000, 172_800] })
    expect(await storedStates(key)).toEqual({
      burst: `${T0 + 666}:2`,
      daily: `${T0 + 172_800}:0`,
    })
    const expiry = await client.pExpireTime(key)
    expect(expiry).toBeGreaterThanOrEqual(before + 172_800)
    expect(expiry).toBeLessThanOrEqual(after + 172_800 + 1)

    // Another limiter charges only `burst` on the same key: the daily debt keeps the key alive.
    const burstOnly = compilePolicies([{ name: 'burst', quota: 3, windowSeconds: 1 }])
    await store.consume({ key: 'k', policies: burstOnly, cost: 1, now: T0 + 1000 })
    expect(await client.pExpireTime(key)).toBe(expiry)
    // A denied check writes nothing.
    const denied = await store.consume({ key: 'k', policies: burstOnly, cost: 4, now: T0 + 1000 })
    expect(denied.allowed).toBe(false)
    expect((await storedStates(key))['burst']).toBe(`${T0 + 1000 + 333}:1`)
  })

  test('a new one-policy field on a key another policy keeps alive: expiry extended, never shortened', async () => {
    const store = newStore()
    const key = `${store.prefix}shared`
    const daily = compilePolicies([{ name: 'daily', quota: 1000, windowSeconds: 86_400 }])
    const burst = compilePolicies([{ name: 'burst', quota: 3, windowSeconds: 1 }])
    await store.consume({ key: 'shared', policies: daily, cost: 1, now: T0 })
    const longer = await client.pExpireTime(key)
    // burst is new on this key and owed for far less: the daily expiry stays.
    await store.consume({ key: 'shared', policies: burst, cost: 1, now: T0 })
    expect(await client.pExpireTime(key)).toBe(longer)
    expect(Object.keys(await client.hGetAll(key)).sort()).toEqual(['burst', 'daily'])
    // A brand-new key gets its first expiry from the one-policy path too.
    await store.consume({ key: 'fresh', policies: burst, cost: 1, now: T0 })
    expect(await client.pTTL(`${store.prefix}fresh`)).toBeGreaterThan(0)
  })

  test("a field in the first version's text form counts as no debt and is written anew, on both paths", async () => {
    const store = newStore()
    const burst = compilePolicies([{ name: 'burst', quota: 3, windowSeconds: 1 }])
    const both = compilePolicies([
      { name: 'burst', quota: 3, windowSeconds: 1 },
      { name: 'daily', quota: 1000, windowSeconds: 86_400 },
    ])
    for (const [key, checked, text] of [
      ['one', burst, `${T0 + 900}:2`], // 15 bytes: shorter than a packed state
      ['two', both, `${T0 + 900}:123456`], // 19 bytes: longer
    ] as const) {
      await client.hSet(`${store.prefix}${key}`, 'burst', text)
      const reply = await store.consume({ key, policies: checked, cost: 1, now: T0 })
      expect(reply.allowed).toBe(true)
      expect(reply.debts[0]).toBe(checked[0]!.emissionTicks)
      expect(Object.keys(await storedStates(`${store.prefix}${key}`))).toContain('burst')
    }
  })

  test('agrees with gcraCheck at the largest magnitudes (limitTicks near 2^51, times near 2^53)', async () => {
    const store = newStore()
    // 868,687 (a prime) per 30 days: gcd(2.592e9 ms, quota) = 1, so limitTicks = quota * 2.592e9,
    // just under the 2^51 that compilePolicies allows; debts and products reach 2^52.
    const big = compilePolicies([
      { name: 'big', quota: 868_687, windowSeconds: 2_592_000 },
      { name: 'odd', quota: 7, windowSeconds: 3 },
    ])
    expect(big[0]?.limitTicks).toBeLessThanOrEqual(MAX_LIMIT_TICKS)
    expect(big[0]?.limitTicks).toBeGreaterThan(2 ** 50)
    const states = new Map<string, ReturnType<typeof gcraCheck>['states']>()
    let now = 2 ** 52 // far beyond today, still a safe integer with room for every TAT
    let seed = 7
    for (let step = 0; step < 200; step++) {
      seed = (seed * 48_271) % 2_147_483_647
      now += seed % 5_000
      const cost = seed % 4 === 0 ? 868_687 : seed % 7
      const check: GcraCheck = { key: 'k', policies: big, cost, now }
      const expected = gcraCheck(states.get('k') ?? [], check)
      if (expected.changed) states.set('k', expected.states)
      const reply = await store.consume(check)
      expect({ step, ...reply }).toEqual({ step, allowed: expected.allowed, debts: expected.debts })
    }
  })

  test('the one-policy path agrees with gcraCheck too, at small and the largest magnitudes', async () => {
    const store = newStore()
    for (const [name, policies, start] of [
      [
        'big',
        compilePolicies([{ name: 'big', quota: 868_687, windowSeconds: 2_592_000 }]),
        2 ** 52,
      ],
      ['odd', compilePolicies([{ name: 'odd', quota: 7, windowSeconds: 3 }]), T0],
    ] as const) {
      let states: ReturnType<typeof gcraCheck>['states'] = []
      let now = start
      let seed = 11
      for (let step = 0; step < 200; step++) {
        seed = (seed * 48_271) % 2_147_483_647
        now += seed % 5_000
        const cost = seed % 4 === 0 ? (policies[0]?.quota ?? 1) : seed % 7
        const check: GcraCheck = { key: `one-${name}`, policies, cost, now }
        const expected = gcraCheck(states, check)
        if (expected.changed) states = expected.states
        const reply = await store.consume(check)
        expect({ name, step, ...reply }).toEqual({
          name,
          step,
          allowed: expected.allowed,
          debts: expected.debts,
        })
      }
    }
  })

  test('a RESP2 client gets the same replies (node-redis 6 defaults to RESP3)', async () => {
    const resp2 = createClient({ ...clientOptions, RESP: 2 })
    resp2.on('error', () => {})
    await resp2.connect()
    try {
      const store = new RedisRateLimitStore({ client: resp2, prefix: testPrefix('resp2') })
      prefixes.push(store.prefix)
      expect(await store.consume({ key: 'k', policies, cost: 2, now: T0 })).toEqual({
        allowed: true,
        debts: [2000, 172_800],
      })
      expect(await store.consume({ key: 'k', policies, cost: 2, now: T0 })).toEqual({
        allowed: false,
        debts: [2000, 172_800],
      })
      // One policy: the one integer reply, negative when denied.
      const burst = policies.slice(0, 1)
      expect(await store.consume({ key: 'one', policies: burst, cost: 3, now: T0 })).toEqual({
        allowed: true,
        debts: [3000],
      })
      expect(await store.consume({ key: 'one', policies: burst, cost: 1, now: T0 })).toEqual({
        allowed: false,
        debts: [3000],
      })
    } finally {
      resp2.destroy()
    }
  })

  test('a disconnected client: consume rejects with command_failed', async () => {
    const closed = createClient(clientOptions)
    closed.on('error', () => {})
    await closed.connect()
    closed.destroy()
    const store = new RedisRateLimitStore({ client: closed, prefix: testPrefix('closed') })
    const error = await store
      .consume({ key: 'k', policies, cost: 1, now: T0 })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RedisStoreError)
    expect(error).toMatchObject({ code: 'COMMAND_FAILED', operation: 'rate-limit.consume' })
  })
})
