import { describe, expect, test, vi } from 'vitest'
import type { GcraCheck } from './gcra.ts'
import { MemoryRateLimitStore } from './memory-store.ts'
import { compilePolicies } from './policy.ts'
import { runRateLimitStoreConformance } from './testing/index.ts'

runRateLimitStoreConformance('MemoryRateLimitStore', () => new MemoryRateLimitStore())
runRateLimitStoreConformance(
  'MemoryRateLimitStore (maxKeys 3: the suite never needs more live keys at once)',
  () => new MemoryRateLimitStore({ maxKeys: 3 }),
)

const T0 = 1_700_000_000_000
const perMinute = compilePolicies([{ name: 'minute', quota: 2, windowSeconds: 60 }])
const consume = async (store: MemoryRateLimitStore, key: string, now: number, cost = 1) =>
  store.consume({ key, policies: perMinute, cost, now })

describe('MemoryRateLimitStore: bounded memory', () => {
  test('a key whose debts are paid is dropped by the incremental sweep, without being read', async () => {
    const store = new MemoryRateLimitStore()
    for (let i = 0; i < 10; i++) await consume(store, `old:${i}`, T0)
    expect(store.size).toBe(10)
    // Later every old debt is paid. Each check sweeps one entry: one pass takes 11 checks.
    for (let i = 0; i < 11; i++) await consume(store, 'new', T0 + 30_000, 0)
    expect(store.size).toBe(0)
  })

  test('a key with unpaid debt survives the sweep', async () => {
    const store = new MemoryRateLimitStore()
    await consume(store, 'live', T0)
    for (let i = 0; i < 10; i++) await consume(store, 'other', T0 + 29_999, 0)
    expect(store.size).toBe(1)
    expect((await consume(store, 'live', T0 + 29_999, 0)).debts).toEqual([1])
  })

  test('denied and zero-cost checks of an unknown key store nothing', async () => {
    const store = new MemoryRateLimitStore()
    await consume(store, 'a', T0, 0)
    await consume(store, 'b', T0, 3)
    expect(store.size).toBe(0)
  })

  test('at maxKeys a key not checked again is evicted (CLOCK) and reported', async () => {
    const onEvict = vi.fn()
    const store = new MemoryRateLimitStore({ maxKeys: 2, onEvict })
    await consume(store, 'a', T0)
    await consume(store, 'b', T0)
    await consume(store, 'a', T0, 0) // a is now the most recently checked
    await consume(store, 'c', T0)
    expect(store.size).toBe(2)
    expect(onEvict).toHaveBeenCalledExactlyOnceWith('b')
    // b starts over: the eviction favours the client, never a bogus refusal
    expect((await consume(store, 'b', T0, 0)).debts).toEqual([0])
    expect((await consume(store, 'a', T0, 0)).debts).toEqual([30_000])
  })

  test('a flood of one-time keys does not push out a key that keeps coming back', async () => {
    const onEvict = vi.fn()
    const store = new MemoryRateLimitStore({ maxKeys: 10, onEvict })
    const hot = compilePolicies([{ name: 'hour', quota: 1000, windowSeconds: 3600 }])
    for (let i = 0; i < 500; i++) {
      await store.consume({ key: 'hot', policies: hot, cost: 1, now: T0 + i })
      await consume(store, `flood:${i}`, T0 + i)
    }
    expect(onEvict).not.toHaveBeenCalledWith('hot')
    expect(
      (await store.consume({ key: 'hot', policies: hot, cost: 0, now: T0 + 500 })).debts,
    ).toEqual([
      500 * 3600 - 500, // 500 units of 3600 ms, minus 500 ms of refill
    ])
  })

  test('paid-up keys make room before any live key is evicted', async () => {
    const onEvict = vi.fn()
    const store = new MemoryRateLimitStore({ maxKeys: 3, onEvict })
    await consume(store, 'live', T0 + 50_000)
    await consume(store, 'old:1', T0)
    await consume(store, 'old:2', T0)
    await consume(store, 'new', T0 + 40_000) // old:1 is paid up by now
    expect(onEvict).not.toHaveBeenCalled()
    expect((await consume(store, 'live', T0 + 50_000, 0)).debts).toEqual([30_000])
  })

  test('evicting a key whose debts are already paid is not reported', async () => {
    const onEvict = vi.fn()
    const store = new MemoryRateLimitStore({ maxKeys: 1, onEvict })
    await consume(store, 'a', T0)
    await consume(store, 'b', T0 + 60_000)
    expect(onEvict).not.toHaveBeenCalled()
  })

  test('an onEvict hook that throws does not fail the check', async () => {
    const store = new MemoryRateLimitStore({
      maxKeys: 1,
      onEvict: () => {
        throw new Error('observer bug')
      },
    })
    await consume(store, 'a', T0)
    await expect(consume(store, 'b', T0)).resolves.toMatchObject({ allowed: true })
  })

  test('the map never holds more than maxKeys keys', async () => {
    const store = new MemoryRateLimitStore({ maxKeys: 100 })
    for (let i = 0; i < 1000; i++) await consume(store, `k${i}`, T0 + i)
    expect(store.size).toBe(100)
  })

  test('reset(key) deletes the entry', async () => {
    const store = new MemoryRateLimitStore()
    await consume(store, 'a', T0)
    await store.reset('a')
    expect(store.size).toBe(0)
  })

  test('maxKeys must be a whole number >= 1', () => {
    expect(() => new MemoryRateLimitStore({ maxKeys: 0 })).toThrow(RangeError)
    expect(() => new MemoryRateLimitStore({ maxKeys: 1.5 })).toThrow(RangeError)
  })
})

describe('MemoryRateLimitStore: the Promise contract', () => {
  test('consume answers a Promise, and a check that is not one rejects rather than throws', async () => {
    const store = new MemoryRateLimitStore()
    const answer = store.consume({ key: 'k', policies: perMinute, cost: 1, now: T0 })
    expect(answer).toBeInstanceOf(Promise)
    await expect(answer).resolves.toEqual({ allowed: true, debts: [30_000] })
    const broken = { key: 'k', policies: undefined, cost: 1, now: T0 } as unknown as GcraCheck
    let rejected: Promise<unknown> | undefined
    expect(() => {
      rejected = store.consume(broken)
    }).not.toThrow()
    await expect(rejected).rejects.toBeInstanceOf(TypeError)
  })
})
