import { describe, expect, test } from 'vitest'
import { runDedupStoreConformance } from '../testing/index.ts'
import { MemoryDedupStore } from './dedup-store.ts'

let now = 1_700_000_000_000
runDedupStoreConformance(
  'memory (injected clock)',
  () => new MemoryDedupStore({ clock: () => now }),
  {
    advance: (ms) => {
      now += ms
    },
  },
)
runDedupStoreConformance('memory (real time)', () => new MemoryDedupStore(), { shortTtlMs: 50 })

const T0 = 1_700_000_000_000

describe('MemoryDedupStore bounds', () => {
  test('the constructor refuses a maxRecords that is not a positive integer', () => {
    for (const maxRecords of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new MemoryDedupStore({ maxRecords })).toThrow(RangeError)
    }
    expect(new MemoryDedupStore().maxRecords).toBe(100_000)
  })

  test('ids outside 1 to 256 characters and TTLs that are not positive are rejected promises', async () => {
    const store = new MemoryDedupStore()
    await expect(store.claim('', 1000)).rejects.toThrow(RangeError)
    await expect(store.claim('x'.repeat(257), 1000)).rejects.toThrow(RangeError)
    for (const ttl of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(store.claim('id', ttl)).rejects.toThrow(RangeError)
    }
    expect(store.size).toBe(0)
  })

  test('past maxRecords the oldest record is forgotten, never more than the bound held', async () => {
    const store = new MemoryDedupStore({ maxRecords: 3, clock: () => T0 })
    for (const id of ['a', 'b', 'c', 'd']) expect(await store.claim(id, 60_000)).toBe(true)
    expect(store.size).toBe(3)
    // 'a' was the oldest: forgotten, so it counts as new (and pushes 'b' out).
    expect(await store.claim('a', 60_000)).toBe(true)
    expect(await store.claim('c', 60_000)).toBe(false)
    expect(await store.claim('b', 60_000)).toBe(true)
    expect(store.size).toBe(3)
  })

  test('expired records at the front go before a live one is evicted', async () => {
    let clock = T0
    const store = new MemoryDedupStore({ maxRecords: 3, clock: () => clock })
    await store.claim('short-1', 1000)
    await store.claim('short-2', 1000)
    await store.claim('long', 60_000)
    clock += 1000
    await store.claim('new-1', 60_000)
    expect(store.size).toBe(2)
    expect(await store.claim('long', 60_000)).toBe(false)
    // A claim that replaces an expired record moves it to the back.
    clock += 60_000
    expect(await store.claim('long', 60_000)).toBe(true)
    await store.claim('new-2', 60_000)
    await store.claim('new-3', 60_000)
    expect(await store.claim('long', 60_000)).toBe(false)
    expect(store.size).toBe(3)
  })

  test('a released record counts towards the bound until eviction reaches it or a claim replaces it', async () => {
    const store = new MemoryDedupStore({ maxRecords: 3, clock: () => T0 })
    for (const id of ['a', 'b', 'c']) await store.claim(id, 60_000)
    await store.release('b')
    expect(store.size).toBe(3)
    // Eviction starts at the front: 'a' (live) goes; 'b' (released) is replaced in place.
    expect(await store.claim('d', 60_000)).toBe(true)
    expect(await store.claim('b', 60_000)).toBe(true)
    expect(store.size).toBe(3)
    expect(await store.claim('c', 60_000)).toBe(false)
    expect(await store.claim('d', 60_000)).toBe(false)
  })

  test('the suites refuse a concurrency below 2 and a shortTtlMs that is not a positive integer', () => {
    const make = () => new MemoryDedupStore()
    expect(() => runDedupStoreConformance('bad', make, { concurrency: 1 })).toThrow(RangeError)
    expect(() => runDedupStoreConformance('bad', make, { shortTtlMs: 0 })).toThrow(RangeError)
    expect(() => runDedupStoreConformance('bad', make, { shortTtlMs: 1.5 })).toThrow(RangeError)
  })
})
