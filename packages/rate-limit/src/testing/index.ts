/**
 * The conformance suite every {@link RateLimitStore} passes: the memory store here, the Redis
 * store in its own package, against a real server. It checks the contract of `RateLimitStore`:
 * every method returns a Promise, checks are atomic (all policies or none, under concurrency),
 * a denied check charges nothing, and the replies agree with the reference model `gcraCheck`. It registers vitest tests, so import it
 * from a test file (vitest is an optional peer dependency of this package).
 *
 * @example
 * ```ts
 * import { runRateLimitStoreConformance } from '@api-blocks/rate-limit/testing'
 * runRateLimitStoreConformance('MemoryRateLimitStore', () => new MemoryRateLimitStore())
 * ```
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import type { GcraCheck, GcraState } from '../gcra.ts'
import { gcraCheck } from '../gcra.ts'
import { createRateLimiter } from '../limiter.ts'
import type { RateLimitPolicy } from '../policy.ts'
import { compilePolicies } from '../policy.ts'
import type { RateLimitStore } from '../store.ts'

/**
 * Options of {@link runRateLimitStoreConformance}.
 *
 * @example
 * ```ts
 * const options: RateLimitStoreConformanceOptions<RedisRateLimitStore> = { close: (store) => store.close(), concurrency: 100 }
 * ```
 */
export interface RateLimitStoreConformanceOptions<Store extends RateLimitStore> {
  /** Releases a store made by `makeStore` (close a connection) after each test. */
  close?: (store: Store) => void | Promise<void>
  /** How many concurrent callers the concurrency tests start (default 50). */
  concurrency?: number
}

// A fixed moment in the past. A store whose TTL is absolute on its own clock (instead of
// relative to `check.now`) loses state here at once, and fails.
const BASE = 1_700_000_000_000

/**
 * Registers the store conformance tests under `describe(name)`. Every test makes a fresh
 * store with `makeStore` and uses keys of its own (random), so a shared server is fine.
 *
 * @example
 * ```ts
 * runRateLimitStoreConformance('RedisRateLimitStore', async () => new RedisRateLimitStore(await connect()), {
 *   close: (store) => store.client.quit(),
 * })
 * ```
 */
export function runRateLimitStoreConformance<Store extends RateLimitStore>(
  name: string,
  makeStore: () => Store | Promise<Store>,
  options: RateLimitStoreConformanceOptions<Store> = {},
): void {
  const concurrency = options.concurrency ?? 50

  const withStore = (body: (store: Store, key: string) => Promise<void>) => async () => {
    const store = await makeStore()
    try {
      await body(store, `conformance:${crypto.randomUUID()}`)
    } finally {
      await options.close?.(store)
    }
  }

  const limiterOn = (store: RateLimitStore, policies: readonly RateLimitPolicy[]) => {
    const clock = { now: BASE }
    const limiter = createRateLimiter({ store, policies, clock: () => clock.now })
    return { limiter, clock }
  }

  describe(name, () => {
    test(
      'MUST: every method returns a Promise (consume allowed, denied and free; reset)',
      withStore(async (store, key) => {
        const policies = compilePolicies([{ name: 'one', quota: 1, windowSeconds: 60 }])
        const calls: [string, () => unknown][] = [
          ['consume, allowed', () => store.consume({ key, policies, cost: 1, now: BASE })],
          ['consume, denied', () => store.consume({ key, policies, cost: 1, now: BASE })],
          ['consume, cost 0', () => store.consume({ key, policies, cost: 0, now: BASE })],
          ['reset', () => store.reset(key)],
        ]
        for (const [call, run] of calls) {
          const answer = run()
          expect({ call, promise: answer instanceof Promise }).toEqual({ call, promise: true })
          await answer
        }
      }),
    )

    test(
      'a fresh key admits exactly its quota at one instant, then denies',
      withStore(async (store, key) => {
        const { limiter } = limiterOn(store, [{ name: 'burst', quota: 5, windowSeconds: 1 }])
        const allowed: boolean[] = []
        for (let i = 0; i < 7; i++) allowed.push((await limiter.check(key)).allowed)
        expect(allowed).toEqual([true, true, true, true, true, false, false])
      }),
    )

    test(
      'weighted cost is charged in units',
      withStore(async (store, key) => {
        const { limiter } = limiterOn(store, [{ name: 'units', quota: 10, windowSeconds: 60 }])
        expect((await limiter.check(key, 3)).policies[0]?.remaining).toBe(7)
        expect((await limiter.check(key, 7)).policies[0]?.remaining).toBe(0)
        expect((await limiter.check(key, 1)).allowed).toBe(false)
      }),
    )

    test(
      'MUST: a denied check consumes nothing',
      withStore(async (store, key) => {
        const { limiter } = limiterOn(store, [{ name: 'units', quota: 10, windowSeconds: 60 }])
        await limiter.check(key, 8)
        for (let i = 0; i < 5; i++) {
          const denied = await limiter.check(key, 3)
          expect(denied.allowed).toBe(false)
          expect(denied.policies[0]?.remaining).toBe(2)
        }
        expect((await limiter.check(key, 2)).allowed).toBe(true)
      }),
    )

    test(
      'a cost above the quota is denied and charges nothing',
      withStore(async (store, key) => {
        const { limiter } = limiterOn(store, [{ name: 'units', quota: 10, windowSeconds: 60 }])
        const denied = await limiter.check(key, 11)
        expect(denied.allowed).toBe(false)
        expect(denied.retryAfterSeconds).toBe(Infinity)
        expect((await limiter.check(key, 10)).allowed).toBe(true)
      }),
    )

    test(
      'cost 0 reads the state without charging',
      withStore(async (store, key) => {
        const { limiter } = limiterOn(store, [{ name: 'units', quota: 4, windowSeconds: 60 }])
        await limiter.check(key, 1)
        for (let i = 0; i < 3; i++)
          expect((await limiter.check(key, 0)).policies[0]?.remaining).toBe(3)
      }),
    )

    test(
      'MUST: several policies are charged all or none',
      withStore(async (store, key) => {
        const { limiter, clock } = limiterOn(store, [
          { name: 'burst', quota: 5, windowSeconds: 1 },
          { name: 'hourly', quota: 8, windowSeconds: 3600 },
        ])
        expect((await limiter.check(key, 4)).allowed).toBe(true) // burst 1 left, hourly 4 left
        // burst refuses: hourly must not be charged
        const byBurst = await limiter.check(key, 2)
        expect(byBurst.allowed).toBe(false)
        expect(byBurst.policies.map((p) => p.violated)).toEqual([true, false])
        expect(byBurst.policies.map((p) => p.remaining)).toEqual([1, 4])
        clock.now += 1000 // burst full again; hourly still has 4 (plus 1.1 ms of refill: none)
        // hourly refuses: burst must not be charged
        const byHourly = await limiter.check(key, 5)
        expect(byHourly.allowed).toBe(false)
        expect(byHourly.policies.map((p) => p.violated)).toEqual([false, true])
        const after = await limiter.check(key, 0)
        expect(after.policies.map((p) => p.remaining)).toEqual([5, 4])
        expect((await limiter.check(key, 4)).allowed).toBe(true)
      }),
    )

    test(
      'quota comes back at the policy rate',
      withStore(async (store, key) => {
        const { limiter, clock } = limiterOn(store, [
          { name: 'slow', quota: 10, windowSeconds: 10 },
        ])
        expect((await limiter.check(key, 10)).allowed).toBe(true)
        clock.now += 999
        expect((await limiter.check(key)).allowed).toBe(false)
        clock.now += 1
        const one = await limiter.check(key)
        expect(one.allowed).toBe(true)
        expect(one.policies[0]?.remaining).toBe(0)
      }),
    )

    test(
      'Retry-After seconds admit the same check, and not one second less',
      withStore(async (store, key) => {
        const { limiter, clock } = limiterOn(store, [
          { name: 'minute', quota: 6, windowSeconds: 60 },
        ])
        await limiter.check(key, 6)
        const denied = await limiter.check(key, 2)
        expect(denied.retryAfterSeconds).toBe(20)
        clock.now += (denied.retryAfterSeconds - 1) * 1000
        expect((await limiter.check(key, 2)).allowed).toBe(false)
        clock.now += 1000
        expect((await limiter.check(key, 2)).allowed).toBe(true)
      }),
    )

    test(
      'expiry: once every debt is paid the key is as new',
      withStore(async (store, key) => {
        const policies = [
          { name: 'second', quota: 2, windowSeconds: 1 },
          { name: 'minute', quota: 3, windowSeconds: 60 },
        ]
        const { limiter, clock } = limiterOn(store, policies)
        await limiter.check(key, 2)
        clock.now += 60_000
        const fresh = await limiter.check(key, 0)
        expect(fresh.policies.map((p) => [p.remaining, p.resetSeconds])).toEqual([
          [2, 0],
          [3, 0],
        ])
      }),
    )

    test(
      'keys are independent',
      withStore(async (store, key) => {
        const { limiter } = limiterOn(store, [{ name: 'one', quota: 1, windowSeconds: 60 }])
        expect((await limiter.check(`${key}:a`)).allowed).toBe(true)
        expect((await limiter.check(`${key}:a`)).allowed).toBe(false)
        expect((await limiter.check(`${key}:b`)).allowed).toBe(true)
      }),
    )

    test(
      'reset(key) forgets every policy of the key',
      withStore(async (store, key) => {
        const { limiter } = limiterOn(store, [
          { name: 'one', quota: 1, windowSeconds: 60 },
          { name: 'two', quota: 2, windowSeconds: 60 },
        ])
        await limiter.check(key)
        await limiter.reset(key)
        const after = await limiter.check(key, 0)
        expect(after.policies.map((p) => p.remaining)).toEqual([1, 2])
      }),
    )

    test(
      'per-policy state is found by policy name',
      withStore(async (store, key) => {
        const clock = { now: BASE }
        const one = createRateLimiter({
          store,
          policies: [{ name: 'shared', quota: 5, windowSeconds: 60 }],
          clock: () => clock.now,
        })
        const two = createRateLimiter({
          store,
          policies: [
            { name: 'other', quota: 9, windowSeconds: 60 },
            { name: 'shared', quota: 5, windowSeconds: 60 },
          ],
          clock: () => clock.now,
        })
        await one.check(key, 2)
        expect((await two.check(key, 1)).policies.map((p) => p.remaining)).toEqual([8, 2])
        expect((await one.check(key, 0)).policies[0]?.remaining).toBe(2)
      }),
    )

    test(
      `MUST: ${concurrency} concurrent callers on one key never exceed the quota`,
      withStore(async (store, key) => {
        const { limiter } = limiterOn(store, [{ name: 'burst', quota: 10, windowSeconds: 60 }])
        const results = await Promise.all(
          Array.from({ length: concurrency }, () => limiter.check(key)),
        )
        expect(results.filter((result) => result.allowed)).toHaveLength(10)
      }),
    )

    test(
      'MUST: concurrent weighted callers on several policies stay within every quota',
      withStore(async (store, key) => {
        const { limiter } = limiterOn(store, [
          { name: 'small', quota: 12, windowSeconds: 60 },
          { name: 'large', quota: 30, windowSeconds: 3600 },
        ])
        const costs = Array.from({ length: concurrency }, (_, i) => (i % 3) + 1)
        const results = await Promise.all(costs.map((cost) => limiter.check(key, cost)))
        const spent = results.reduce((sum, result, i) => sum + (result.allowed ? costs[i]! : 0), 0)
        expect(spent).toBeLessThanOrEqual(12)
        // Once the dust settles, what is left agrees with what was spent.
        const left = await limiter.check(key, 0)
        expect(left.policies.map((p) => p.remaining)).toEqual([12 - spent, 30 - spent])
      }),
    )

    test(
      'agrees with the reference GCRA (gcraCheck) on a long random sequence',
      withStore(async (store, key) => {
        const policies = compilePolicies([
          { name: 'a', quota: 7, windowSeconds: 1 },
          { name: 'b', quota: 40, windowSeconds: 60 },
          { name: 'c', quota: 3, windowSeconds: 2 },
        ])
        const model = new Map<string, (GcraState | undefined)[]>()
        let seed = 0x2545f491
        const random = (n: number) => {
          // xorshift32: a fixed sequence, so a failure replays exactly
          seed ^= seed << 13
          seed ^= seed >>> 17
          seed ^= seed << 5
          return (seed >>> 0) % n
        }
        let now = BASE
        for (let step = 0; step < 400; step++) {
          now += random(4) === 0 ? random(3000) : random(120)
          const check: GcraCheck = { key: `${key}:${random(3)}`, policies, cost: random(5), now }
          const expected = gcraCheck(model.get(check.key) ?? [], check)
          if (expected.changed) model.set(check.key, [...expected.states])
          const reply = await store.consume(check)
          expect({ step, allowed: reply.allowed, debts: [...reply.debts] }).toEqual({
            step,
            allowed: expected.allowed,
            debts: expected.debts,
          })
        }
      }),
    )
  })
}
