import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { createFreshnessTracker } from './ordering.ts'

const budget = { interruptAfterTimeLimit: 2000 }

describe('createFreshnessTracker', () => {
  test('fresh, same and stale per object', () => {
    const tracker = createFreshnessTracker()
    expect(tracker.observe('order:1', 2)).toBe('fresh')
    expect(tracker.observe('order:1', 2)).toBe('same')
    expect(tracker.observe('order:1', 1)).toBe('stale') // an older version arriving late
    expect(tracker.observe('order:1', 3)).toBe('fresh')
    expect(tracker.observe('order:1', 2)).toBe('stale')
    expect(tracker.observe('order:2', 1)).toBe('fresh') // objects are independent
  })

  test('created timestamps work as positions', () => {
    const tracker = createFreshnessTracker()
    expect(tracker.observe('order:1', 1_764_460_860)).toBe('fresh')
    expect(tracker.observe('order:1', 1_764_460_800)).toBe('stale')
  })

  test('bounded: the least recently seen object is forgotten first', () => {
    const tracker = createFreshnessTracker({ maxObjects: 2 })
    tracker.observe('a', 5)
    tracker.observe('b', 5)
    tracker.observe('a', 1) // stale, but seen: b is now the least recent
    tracker.observe('c', 5)
    expect(tracker.size).toBe(2)
    expect(tracker.observe('a', 4)).toBe('stale') // a is remembered
    expect(tracker.observe('b', 4)).toBe('fresh') // b was forgotten
  })

  test('matches the highest position seen per key, and never holds more than maxObjects', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(
          fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e'), fc.integer({ min: -5, max: 5 })),
        ),
        (maxObjects, steps) => {
          const tracker = createFreshnessTracker({ maxObjects })
          const model = new Map<string, number>()
          for (const [key, position] of steps) {
            const seen = model.get(key)
            model.delete(key)
            const expected =
              seen === undefined || position > seen ? 'fresh' : position === seen ? 'same' : 'stale'
            model.set(key, Math.max(seen ?? position, position))
            if (model.size > maxObjects) model.delete(model.keys().next().value!)
            expect(tracker.observe(key, position)).toBe(expected)
            expect(tracker.size).toBeLessThanOrEqual(maxObjects)
          }
        },
      ),
      budget,
    )
  })

  test('bad input is refused', () => {
    expect(() => createFreshnessTracker({ maxObjects: 0 })).toThrow(RangeError)
    expect(() => createFreshnessTracker().observe('a', Number.NaN)).toThrow(TypeError)
  })
})
