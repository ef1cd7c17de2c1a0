import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AttemptResult } from './attempt.ts'
import { createRetryPolicy, retrySchedules } from './retry-policy.ts'

const budget = { interruptAfterTimeLimit: 2000 }
/** The largest double below 1: the top of `Math.random`'s range, a factor of (almost) 1.5. */
const JUST_BELOW_ONE = 1 - 2 ** -53

function response(status: number, retryAfterMs: number | null = null): AttemptResult {
  return { kind: 'response', status, retryAfterMs, body: '', latencyMs: 3 }
}
function failure(kind: 'timeout' | 'connection' | 'address-refused'): AttemptResult {
  return { kind: 'failure', failure: kind, message: kind, latencyMs: 3 }
}

describe('createRetryPolicy: the outcome table of docs/spec.md §3.1', () => {
  const policy = createRetryPolicy({
    baseMs: 1_000,
    maxMs: 60_000,
    maxAttempts: 5,
    random: () => 0.5,
  })
  it.each([
    ['200', response(200), { status: 'succeeded' }],
    ['204', response(204), { status: 'succeeded' }],
    ['299', response(299), { status: 'succeeded' }],
    [
      '301 (redirects are never followed, but retried like a 5xx)',
      response(301),
      { status: 'pending', delayMs: 4_000 },
    ],
    ['302', response(302), { status: 'pending', delayMs: 4_000 }],
    ['307', response(307), { status: 'pending', delayMs: 4_000 }],
    ['400', response(400), { status: 'failed', disableEndpoint: false }],
    ['401', response(401), { status: 'failed', disableEndpoint: false }],
    ['404', response(404), { status: 'failed', disableEndpoint: false }],
    [
      '408 (4xx other than 429 is permanent)',
      response(408),
      { status: 'failed', disableEndpoint: false },
    ],
    ['410 disables the endpoint', response(410), { status: 'failed', disableEndpoint: true }],
    ['499', response(499), { status: 'failed', disableEndpoint: false }],
    ['429 without Retry-After', response(429), { status: 'pending', delayMs: 4_000 }],
    ['429 with Retry-After', response(429, 7_000), { status: 'pending', delayMs: 7_000 }],
    ['429 with Retry-After 0', response(429, 0), { status: 'pending', delayMs: 0 }],
    [
      '429 with Retry-After over the cap',
      response(429, 86_400_000),
      { status: 'pending', delayMs: 3_600_000 },
    ],
    ['500', response(500), { status: 'pending', delayMs: 4_000 }],
    [
      '503 (Retry-After is read on a 429 only)',
      response(503, 9_000),
      { status: 'pending', delayMs: 4_000 },
    ],
    ['599', response(599), { status: 'pending', delayMs: 4_000 }],
    ['timeout', failure('timeout'), { status: 'pending', delayMs: 4_000 }],
    ['connection error', failure('connection'), { status: 'pending', delayMs: 4_000 }],
    [
      'address refused at connect time',
      failure('address-refused'),
      { status: 'failed', disableEndpoint: false },
    ],
  ])('attempt 2, %s', (_, result, decision) => {
    expect(policy.decide(result, 2)).toEqual(decision)
  })

  it.each([
    ['429', response(429)],
    ['429 with Retry-After', response(429, 1_000)],
    ['500', response(500)],
    ['timeout', failure('timeout')],
    ['connection error', failure('connection')],
  ])('the last attempt (4 of 5) ending in %s is dead-lettered', (_, result) => {
    expect(policy.decide(result, 3)).toMatchObject({ status: 'pending' })
    expect(policy.decide(result, 4)).toEqual({ status: 'dead' })
    expect(policy.decide(result, 40)).toEqual({ status: 'dead' })
  })

  it('a final outcome on the last attempt is still that outcome, not dead', () => {
    expect(policy.decide(response(200), 4)).toEqual({ status: 'succeeded' })
    expect(policy.decide(response(410), 4)).toEqual({ status: 'failed', disableEndpoint: true })
  })

  it('one attempt only: the first retryable failure is dead', () => {
    const once = createRetryPolicy({ maxAttempts: 1 })
    expect(once.decide(response(500), 0)).toEqual({ status: 'dead' })
  })
})

describe('createRetryPolicy: exact delays with a fixed random', () => {
  const at = (random: number) =>
    createRetryPolicy({ baseMs: 1_000, maxMs: 60_000, maxAttempts: 100, random: () => random })
  it.each([
    // attempt, step = min(1000 × 2^attempt, 60000), then × 0.5, × 1.0, × 1.5
    [0, 500, 1_000, 1_500],
    [1, 1_000, 2_000, 3_000],
    [2, 2_000, 4_000, 6_000],
    [5, 16_000, 32_000, 48_000],
    [6, 30_000, 60_000, 90_000],
    [7, 30_000, 60_000, 90_000],
    [60, 30_000, 60_000, 90_000],
    [98, 30_000, 60_000, 90_000],
  ])('attempt %i: %i, %i, %i', (attempt, low, middle, high) => {
    expect(at(0).decide(response(500), attempt)).toEqual({ status: 'pending', delayMs: low })
    expect(at(0.5).decide(response(500), attempt)).toEqual({ status: 'pending', delayMs: middle })
    expect(at(JUST_BELOW_ONE).decide(response(500), attempt)).toEqual({
      status: 'pending',
      delayMs: high,
    })
  })

  it('an odd step stays within [0.5, 1.5] of it after rounding', () => {
    const policy = (random: number) =>
      createRetryPolicy({ baseMs: 333, maxMs: 333, random: () => random })
    expect(policy(0).decide(response(500), 0)).toEqual({ status: 'pending', delayMs: 167 })
    expect(policy(JUST_BELOW_ONE).decide(response(500), 0)).toEqual({
      status: 'pending',
      delayMs: 499,
    })
  })

  it('the typical schedule is the default: 7 attempts, 1 min … 24 h before jitter', () => {
    const policy = createRetryPolicy({ random: () => 0.5 })
    expect(policy.maxAttempts).toBe(7)
    const delays = [0, 1, 2, 3, 4, 5].map((attempt) => policy.decide(failure('timeout'), attempt))
    expect(delays).toEqual(
      [60_000, 600_000, 3_600_000, 21_600_000, 43_200_000, 86_400_000].map((delayMs) => ({
        status: 'pending',
        delayMs,
      })),
    )
    expect(policy.decide(failure('timeout'), 6)).toEqual({ status: 'dead' })
    expect(retrySchedules.typical).toEqual([
      60_000, 600_000, 3_600_000, 21_600_000, 43_200_000, 86_400_000,
    ])
    expect(Object.isFrozen(retrySchedules.typical)).toBe(true)
  })

  it('a schedule step takes the same jitter; its last step repeats', () => {
    const low = createRetryPolicy({ schedule: [0, 10_000], maxAttempts: 5, random: () => 0 })
    const high = createRetryPolicy({
      schedule: [0, 10_000],
      maxAttempts: 5,
      random: () => JUST_BELOW_ONE,
    })
    expect(low.decide(response(503), 0)).toEqual({ status: 'pending', delayMs: 0 })
    expect(low.decide(response(503), 1)).toEqual({ status: 'pending', delayMs: 5_000 })
    expect(high.decide(response(503), 1)).toEqual({ status: 'pending', delayMs: 15_000 })
    expect(high.decide(response(503), 3)).toEqual({ status: 'pending', delayMs: 15_000 })
    expect(high.decide(response(503), 4)).toEqual({ status: 'dead' })
  })

  it('a random outside [0, 1) is clamped, never NaN', () => {
    for (const value of [-1, 2, Number.NaN, Number.POSITIVE_INFINITY]) {
      const decision = createRetryPolicy({
        baseMs: 1_000,
        maxMs: 1_000,
        random: () => value,
      }).decide(response(500), 0)
      expect(decision.status).toBe('pending')
      const { delayMs } = decision as { delayMs: number }
      expect(delayMs >= 500 && delayMs <= 1_500).toBe(true)
    }
  })

  it('refuses options that make no sense', () => {
    expect(() => createRetryPolicy({ baseMs: 0 })).toThrow(RangeError)
    expect(() => createRetryPolicy({ baseMs: 2_000, maxMs: 1_000 })).toThrow(RangeError)
    expect(() => createRetryPolicy({ maxMs: Number.POSITIVE_INFINITY })).toThrow(RangeError)
    expect(() => createRetryPolicy({ schedule: [] })).toThrow(RangeError)
    expect(() => createRetryPolicy({ schedule: [-1] })).toThrow(RangeError)
    expect(() => createRetryPolicy({ maxAttempts: 0 })).toThrow(RangeError)
    expect(() => createRetryPolicy({ retryAfterMaxMs: Number.NaN })).toThrow(RangeError)
  })
})

describe('createRetryPolicy: properties', () => {
  it('the delay is within [0.5, 1.5] × min(base × 2^attempt, max), never NaN or negative', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3_600_000 }),
        fc.integer({ min: 0, max: 30 * 86_400_000 }),
        fc.oneof(
          fc.integer({ min: 0, max: 2_000 }),
          fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER - 2 }),
        ),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (baseMs, extra, attempt, random) => {
          const maxMs = Math.min(baseMs + extra, 30 * 86_400_000)
          const policy = createRetryPolicy({
            baseMs,
            maxMs,
            maxAttempts: Number.MAX_SAFE_INTEGER,
            random: () => random,
          })
          const decision = policy.decide(response(503), attempt)
          if (decision.status !== 'pending') throw new Error(`not pending: ${decision.status}`)
          const step = Math.min(baseMs * 2 ** attempt, maxMs)
          expect(Number.isInteger(decision.delayMs)).toBe(true)
          expect(decision.delayMs).toBeGreaterThanOrEqual(0.5 * step)
          expect(decision.delayMs).toBeLessThanOrEqual(1.5 * step)
        },
      ),
      budget,
    )
  })

  it('any result and any attempt number gives a well-formed decision', () => {
    const result = fc.oneof(
      fc.record({
        kind: fc.constant('response' as const),
        status: fc.integer({ min: 100, max: 999 }),
        retryAfterMs: fc.option(fc.double()),
        body: fc.constant(''),
        latencyMs: fc.nat(),
      }),
      fc.record({
        kind: fc.constant('failure' as const),
        failure: fc.constantFrom(
          'timeout' as const,
          'connection' as const,
          'address-refused' as const,
        ),
        message: fc.constant(''),
        latencyMs: fc.nat(),
      }),
    )
    const policy = createRetryPolicy()
    fc.assert(
      fc.property(result, fc.double(), (attemptResult, attempt) => {
        const decision = policy.decide(attemptResult, attempt)
        if (decision.status === 'pending') {
          expect(Number.isSafeInteger(decision.delayMs) && decision.delayMs >= 0).toBe(true)
          expect(decision.delayMs).toBeLessThanOrEqual(1.5 * 86_400_000)
        } else {
          expect(['succeeded', 'failed', 'dead']).toContain(decision.status)
        }
      }),
      budget,
    )
  })
})
