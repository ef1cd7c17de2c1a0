import { describe, expect, test } from 'vitest'
import { reconnectBackoff } from './reconnect.ts'

describe('reconnectBackoff', () => {
  test('doubles from baseMs up to maxMs, half fixed and half jitter', () => {
    const low = reconnectBackoff({ baseMs: 100, maxMs: 1_000, random: () => 0 })
    const high = reconnectBackoff({ baseMs: 100, maxMs: 1_000, random: () => 0.999_999 })
    expect([0, 1, 2, 3, 4, 10, 5_000].map(low)).toEqual([50, 100, 200, 400, 500, 500, 500])
    expect([0, 1, 2, 3, 4, 10, 5_000].map(high)).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000])
  })

  test('never gives up, never waits 0 ms, and refuses a schedule that makes no sense', () => {
    const strategy = reconnectBackoff()
    for (let retries = 0; retries < 2_000; retries += 7) {
      const wait = strategy(retries)
      expect(wait).toBeGreaterThanOrEqual(25)
      expect(wait).toBeLessThanOrEqual(2_000)
    }
    expect(() => reconnectBackoff({ baseMs: 0 })).toThrow(RangeError)
    expect(() => reconnectBackoff({ baseMs: 500, maxMs: 100 })).toThrow(RangeError)
  })
})
