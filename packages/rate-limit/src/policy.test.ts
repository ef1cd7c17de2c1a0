import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { compilePolicies, MAX_LIMIT_TICKS } from './policy.ts'

describe('compilePolicies', () => {
  test('a whole number of ms per unit needs one tick per ms', () => {
    const [burst] = compilePolicies([{ name: 'burst', quota: 10, windowSeconds: 1 }])
    expect(burst).toMatchObject({ ticksPerMs: 1, emissionTicks: 100, limitTicks: 1000 })
  })

  test('a fractional emission interval is exact in ticks (3 per second: 333 1/3 ms)', () => {
    const [third] = compilePolicies([{ name: 'third', quota: 3, windowSeconds: 1 }])
    expect(third).toMatchObject({ ticksPerMs: 3, emissionTicks: 1000, limitTicks: 3000 })
  })

  test('round long quotas stay small: 1,000,000 per 30 days', () => {
    const [monthly] = compilePolicies([
      { name: 'monthly', quota: 1_000_000, windowSeconds: 2_592_000 },
    ])
    expect(monthly).toMatchObject({ ticksPerMs: 1, emissionTicks: 2592, limitTicks: 2_592_000_000 })
  })

  test('every compiled policy keeps emission/ticksPerMs = window/quota exactly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000_000 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        (quota, windowSeconds) => {
          const windowMs = windowSeconds * 1000
          let compiled: ReturnType<typeof compilePolicies>[number]
          try {
            compiled = compilePolicies([{ name: 'p', quota, windowSeconds }])[0]!
          } catch (error) {
            // Refused only when the window in ticks would pass 2^51.
            expect(error).toBeInstanceOf(RangeError)
            expect(quota * windowMs).toBeGreaterThan(MAX_LIMIT_TICKS)
            return
          }
          const { ticksPerMs, emissionTicks, limitTicks } = compiled
          expect(Number.isSafeInteger(ticksPerMs) && Number.isSafeInteger(emissionTicks)).toBe(true)
          expect(emissionTicks * quota).toBe(windowMs * ticksPerMs)
          expect(limitTicks).toBe(quota * emissionTicks)
          expect(limitTicks).toBeLessThanOrEqual(MAX_LIMIT_TICKS)
        },
      ),
      { interruptAfterTimeLimit: 2000, numRuns: 2000 },
    )
  })

  test('refuses configuration mistakes with a message naming the policy', () => {
    expect(() => compilePolicies([])).toThrow(TypeError)
    expect(() => compilePolicies([{ name: '', quota: 1, windowSeconds: 1 }])).toThrow(/name/)
    expect(() => compilePolicies([{ name: 'x'.repeat(65), quota: 1, windowSeconds: 1 }])).toThrow(
      TypeError,
    )
    expect(() => compilePolicies([{ name: 'tab\there', quota: 1, windowSeconds: 1 }])).toThrow(
      TypeError,
    )
    expect(() => compilePolicies([{ name: 'é', quota: 1, windowSeconds: 1 }])).toThrow(TypeError)
    expect(() =>
      compilePolicies([
        { name: 'a', quota: 1, windowSeconds: 1 },
        { name: 'a', quota: 2, windowSeconds: 1 },
      ]),
    ).toThrow(/twice/)
    expect(() => compilePolicies([{ name: 'q', quota: 0, windowSeconds: 1 }])).toThrow(/"q": quota/)
    expect(() => compilePolicies([{ name: 'q', quota: 1.5, windowSeconds: 1 }])).toThrow(RangeError)
    expect(() => compilePolicies([{ name: 'w', quota: 1, windowSeconds: 0.5 }])).toThrow(
      /windowSeconds/,
    )
    expect(() =>
      compilePolicies([{ name: 'huge', quota: 999_999_937, windowSeconds: 86_400 }]),
    ).toThrow(/2\^51/)
  })

  test('compiled policies are frozen', () => {
    const compiled = compilePolicies([{ name: 'a', quota: 1, windowSeconds: 1 }])
    expect(Object.isFrozen(compiled) && Object.isFrozen(compiled[0])).toBe(true)
  })
})
