import { ApiBlocksError } from '@api-blocks/core'
import { ProblemError } from '@api-blocks/problem-details'
import { describe, expect, test } from 'vitest'
import { RateLimitError } from './error.ts'
import type { GcraReply } from './gcra.ts'
import { createRateLimiter } from './limiter.ts'
import { MemoryRateLimitStore } from './memory-store.ts'
import type { RateLimitStore } from './store.ts'

const T0 = 1_700_000_000_000
const policies = [
  { name: 'burst', quota: 10, windowSeconds: 1 },
  { name: 'daily', quota: 1000, windowSeconds: 86_400 },
]

const failingStore = (error: unknown): RateLimitStore => ({
  consume: () => Promise.reject(error),
  reset: () => Promise.reject(error),
})

describe('createRateLimiter', () => {
  test('checks every policy and reports each one', async () => {
    const limiter = createRateLimiter({
      store: new MemoryRateLimitStore(),
      policies,
      clock: () => T0,
    })
    const result = await limiter.check('principal:sub:alice', 4)
    expect(result).toEqual({
      allowed: true,
      checkedAt: T0,
      retryAfterSeconds: 0,
      policies: [
        {
          name: 'burst',
          quota: 10,
          windowSeconds: 1,
          remaining: 6,
          resetSeconds: 1,
          violated: false,
        },
        // one unit of 1000/day comes back every 86.4 s
        {
          name: 'daily',
          quota: 1000,
          windowSeconds: 86_400,
          remaining: 996,
          resetSeconds: 87,
          violated: false,
        },
      ],
    })
  })

  test('the clock is injected and floored to whole milliseconds', async () => {
    let now = T0 + 0.7
    const limiter = createRateLimiter({
      store: new MemoryRateLimitStore(),
      policies: [{ name: 'one', quota: 1, windowSeconds: 1 }],
      clock: () => now,
    })
    expect((await limiter.check('k')).checkedAt).toBe(T0)
    now = T0 + 999.9
    expect((await limiter.check('k')).allowed).toBe(false)
    now = T0 + 1000
    expect((await limiter.check('k')).allowed).toBe(true)
  })

  test('a store failure rejects with RateLimitError STORE_UNAVAILABLE, the cause attached', async () => {
    const cause = new Error('ECONNREFUSED')
    const limiter = createRateLimiter({ store: failingStore(cause), policies })
    const error = await limiter.check('k').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitError)
    expect(error).toBeInstanceOf(ProblemError)
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503, cause })
    await expect(limiter.reset('k')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', cause })
  })

  test('a store that throws synchronously is a store failure too', async () => {
    const store: RateLimitStore = {
      consume: () => {
        throw new Error('sync')
      },
      reset: () => Promise.resolve(),
    }
    await expect(createRateLimiter({ store, policies }).check('k')).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    })
  })

  test("a store's promise may be a client library's own thenable", async () => {
    const memory = new MemoryRateLimitStore()
    const asThenable: RateLimitStore = {
      // a client library's own promise type, not a native Promise
      consume: (check) =>
        ({
          // biome-ignore lint/suspicious/noThenProperty: a thenable is what this test is about
          then: (resolve: (reply: GcraReply) => void) => memory.consume(check).then(resolve),
        }) as unknown as Promise<GcraReply>,
      reset: (key) => memory.reset(key),
    }
    for (const store of [memory, asThenable]) {
      const limiter = createRateLimiter({ store, policies, clock: () => T0 })
      const result = await limiter.check(`k:${Math.random()}`, 3)
      expect(result.policies.map((p) => p.remaining)).toEqual([7, 997])
    }
  })

  test('a malformed store reply is a store failure, not a guess', async () => {
    const replies: unknown[] = [
      null,
      {},
      { allowed: true },
      { allowed: true, debts: [0] },
      { allowed: 'yes', debts: [0, 0] },
      { allowed: true, debts: [0, Number.NaN] },
      { allowed: true, debts: ['1', 0] },
      { allowed: false, debts: [-1, 0] },
    ]
    for (const reply of replies) {
      const store: RateLimitStore = {
        consume: () => Promise.resolve(reply as GcraReply),
        reset: () => Promise.resolve(),
      }
      await expect(createRateLimiter({ store, policies }).check('k')).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
      })
    }
  })

  test('a cost that is not a whole number >= 0 is a programming error (RangeError)', async () => {
    const limiter = createRateLimiter({ store: new MemoryRateLimitStore(), policies })
    for (const cost of [-1, 1.5, Number.NaN, Infinity]) {
      await expect(limiter.check('k', cost)).rejects.toBeInstanceOf(RangeError)
    }
    await expect(limiter.check(42 as unknown as string)).rejects.toBeInstanceOf(TypeError)
  })

  test('a clock that answers nonsense is refused', async () => {
    const limiter = createRateLimiter({
      store: new MemoryRateLimitStore(),
      policies,
      clock: () => Number.NaN,
    })
    await expect(limiter.check('k')).rejects.toBeInstanceOf(RangeError)
  })

  test('exposes the compiled policies', () => {
    const limiter = createRateLimiter({ store: new MemoryRateLimitStore(), policies })
    expect(limiter.policies.map((p) => [p.name, p.emissionTicks])).toEqual([
      ['burst', 100],
      ['daily', 86_400],
    ])
  })
})

describe('RateLimitError', () => {
  test('QUOTA_EXCEEDED answers the IANA quota-exceeded problem with violated-policies', async () => {
    const limiter = createRateLimiter({
      store: new MemoryRateLimitStore(),
      policies,
      clock: () => T0,
    })
    await limiter.check('k', 10)
    const result = await limiter.check('k')
    const error = RateLimitError.quotaExceeded(result)
    expect(error.code).toBe('QUOTA_EXCEEDED')
    expect(error.status).toBe(429)
    expect(error.result).toBe(result)
    expect(error.toProblem()).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Request quota exceeded.',
      status: 429,
      detail: 'Quota exceeded: "burst" (10 per 1 s). Retry in 1 s.',
      'violated-policies': ['burst'],
    })
  })

  test('STORE_UNAVAILABLE answers 503 service-unavailable, the cause kept out of the problem', () => {
    const cause = new Error('ECONNREFUSED 127.0.0.1:6379')
    const error = new RateLimitError('STORE_UNAVAILABLE', 'The rate-limit store is unavailable.', {
      cause,
    })
    expect(error).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      status: 503,
      cause,
      result: undefined,
    })
    expect(error.name).toBe('RateLimitError')
    expect(error.toProblem()).toMatchObject({ type: 'service-unavailable', status: 503 })
    expect(JSON.stringify(error.toProblem())).not.toContain('ECONNREFUSED')
  })

  test('is an ApiBlocksError of kind rate-limit.RateLimitError, recognised across copies', () => {
    const error = new RateLimitError('STORE_UNAVAILABLE', 'down')
    expect(error).toBeInstanceOf(ApiBlocksError)
    expect(RateLimitError.kind).toBe('rate-limit.RateLimitError')
    // A second copy of the package (a duplicate install): another class of the same kind.
    const Copy = class RateLimitError extends ProblemError {
      static override readonly kind: string = 'rate-limit.RateLimitError'
    }
    const foreign = new Copy({ type: 'service-unavailable', title: 'x', status: 503 })
    expect(foreign).toBeInstanceOf(RateLimitError)
    expect(new ProblemError({ type: 'about:blank', title: 'x', status: 503 })).not.toBeInstanceOf(
      RateLimitError,
    )
  })
})
