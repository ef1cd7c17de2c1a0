/**
 * The conformance suite of {@link DedupStore}: every dedup store (memory, Redis, PostgreSQL,
 * yours) registers it in its own test file and must pass it unchanged. It checks the contract
 * of `dedup-store.ts`: the first claim of an id wins and repeats lose until the record
 * expires, exactly one of 50 racing claims wins, `release` lets the next claim win, a repeat
 * does not extend the record, and ids are compared exactly.
 *
 * A dedup store reads its own clock (Redis expires keys by the server's). A store whose clock
 * is injected passes `advance` and the expiry cases move time exactly; without it they wait in
 * real time for a short TTL (`shortTtlMs`, default 200 ms; three such waits in all), and only
 * assert what waiting longer cannot break. Every test uses fresh random ids, so the suite can
 * run against a shared server.
 *
 * @module
 */
import { describe, expect } from 'vitest'
import type { DedupStore } from '../dedup-store.ts'
import { AWKWARD, promised, randomId, registrar } from './shared.ts'

/**
 * Options of {@link runDedupStoreConformance}.
 *
 * @example
 * ```ts
 * let now = 1_700_000_000_000
 * const options: DedupStoreConformanceOptions = { advance: (ms) => { now += ms } }
 * ```
 */
export interface DedupStoreConformanceOptions {
  /**
   * Moves the store's clock forward by `ms` (a store built with an injected clock). Absent,
   * the expiry cases wait in real time.
   */
  readonly advance?: (ms: number) => void | Promise<void>
  /** The TTL of the real-time expiry cases, in ms (default 200); the wait is this plus 50 ms. */
  readonly shortTtlMs?: number
  /** Called after each test with its store (close a client, delete its keys). */
  readonly cleanup?: (store: DedupStore) => void | Promise<void>
  /** Per-test timeout in milliseconds (default 20,000). */
  readonly timeoutMs?: number
  /** How many calls race in the concurrency tests (default 50, at least 2). */
  readonly concurrency?: number
}

const DAY = 86_400_000

/**
 * Registers the conformance tests of a {@link DedupStore} with vitest (an optional peer
 * dependency of this package). Call it at the top level of a test file.
 *
 * @param name shown in the test names, e.g. `redis`.
 * @param makeStore gives a ready store for one test; called once per test.
 *
 * @example
 * ```ts
 * import { MemoryDedupStore } from '@api-blocks/webhooks'
 * import { runDedupStoreConformance } from '@api-blocks/webhooks/testing'
 *
 * let now = 1_700_000_000_000
 * runDedupStoreConformance('memory', () => new MemoryDedupStore({ clock: () => now }), {
 *   advance: (ms) => {
 *     now += ms
 *   },
 * })
 * ```
 */
export function runDedupStoreConformance(
  name: string,
  makeStore: () => DedupStore | Promise<DedupStore>,
  options: DedupStoreConformanceOptions = {},
): void {
  const { advance, shortTtlMs = 200 } = options
  if (!Number.isSafeInteger(shortTtlMs) || shortTtlMs < 1) {
    throw new RangeError('runDedupStoreConformance: shortTtlMs must be a positive integer')
  }
  const { it, concurrency } = registrar('runDedupStoreConformance', makeStore, options, randomId)
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
  const mode = advance === undefined ? `real time, TTL ${shortTtlMs} ms` : 'injected clock'

  describe(`DedupStore conformance: ${name}`, () => {
    it('every method MUST return a Promise', async (store, run) => {
      expect(await promised(store.claim(`msg_${run}`, DAY))).toBe(true)
      expect(await promised(store.claim(`msg_${run}`, DAY))).toBe(false)
      expect(await promised(store.release(`msg_${run}`))).toBeUndefined()
      expect(await promised(store.release(`msg_${run}_never`))).toBeUndefined()
    })

    it('the first claim of an id MUST answer true and every repeat false while it lasts', async (store, run) => {
      const id = `msg_${run}`
      expect(await store.claim(id, DAY)).toBe(true)
      expect(await store.claim(id, DAY)).toBe(false)
      expect(await store.claim(id, 1000 * DAY)).toBe(false)
      expect(await store.claim(`${id}_2`, DAY)).toBe(true)
      expect(await store.claim(id, DAY)).toBe(false)
    })

    it('ids MUST be compared exactly: case, spaces, unusual characters and 256 characters', async (store, run) => {
      const ids = [
        `msg_${run}`,
        `MSG_${run}`,
        `msg_${run} `,
        ` msg_${run}`,
        `msg_${run}:*`,
        `msg_${run}:${AWKWARD}`,
        `${run}${'x'.repeat(256 - run.length)}`,
        `${run}${'x'.repeat(255 - run.length)}`,
      ]
      for (const id of ids) expect(await store.claim(id, DAY)).toBe(true)
      for (const id of ids) expect(await store.claim(id, DAY)).toBe(false)
    })

    it('after release the next claim MUST answer true', async (store, run) => {
      const id = `msg_${run}`
      expect(await store.claim(id, DAY)).toBe(true)
      await store.release(id)
      expect(await store.claim(id, DAY)).toBe(true)
      expect(await store.claim(id, DAY)).toBe(false)
      await store.release(id)
      await store.release(id)
      expect(await store.claim(id, DAY)).toBe(true)
    })

    it(`of ${concurrency} concurrent claims of one id exactly one MUST answer true`, async (store, run) => {
      const id = `msg_${run}`
      const race = () =>
        Promise.all(Array.from({ length: concurrency }, () => store.claim(id, DAY)))
      expect((await race()).filter(Boolean)).toHaveLength(1)
      await store.release(id)
      expect((await race()).filter(Boolean)).toHaveLength(1)
    })

    it(`concurrent claims of different ids MUST each answer true once`, async (store, run) => {
      const ids = Array.from({ length: concurrency }, (_, i) => `msg_${run}_${i}`)
      const answers = await Promise.all([...ids, ...ids].map((id) => store.claim(id, DAY)))
      expect(answers.filter(Boolean)).toHaveLength(concurrency)
      for (const id of ids) expect(await store.claim(id, DAY)).toBe(false)
    })

    if (advance === undefined) {
      it(`a claim MUST answer true again once the record expired (${mode})`, async (store, run) => {
        const id = `msg_${run}`
        expect(await store.claim(id, shortTtlMs)).toBe(true)
        await sleep(shortTtlMs + 50)
        expect(await store.claim(id, DAY)).toBe(true)
        expect(await store.claim(id, DAY)).toBe(false)
      })

      it(`a repeat MUST NOT extend the record (${mode})`, async (store, run) => {
        const id = `msg_${run}`
        expect(await store.claim(id, shortTtlMs)).toBe(true)
        expect(await store.claim(id, DAY)).toBe(false)
        await sleep(shortTtlMs + 50)
        expect(await store.claim(id, DAY)).toBe(true)
      })

      it(`release of an expired record and a new claim MUST answer true (${mode})`, async (store, run) => {
        const id = `msg_${run}`
        expect(await store.claim(id, shortTtlMs)).toBe(true)
        await sleep(shortTtlMs + 50)
        await store.release(id)
        expect(await store.claim(id, DAY)).toBe(true)
      })
    } else {
      it(`a record MUST last until its end exactly, then a claim answers true (${mode})`, async (store, run) => {
        const id = `msg_${run}`
        expect(await store.claim(id, 60_000)).toBe(true)
        await advance(59_999)
        expect(await store.claim(id, DAY)).toBe(false)
        await advance(1)
        expect(await store.claim(id, DAY)).toBe(true)
        await advance(DAY - 1)
        expect(await store.claim(id, 60_000)).toBe(false)
      })

      it(`a repeat MUST NOT extend the record (${mode})`, async (store, run) => {
        const id = `msg_${run}`
        expect(await store.claim(id, 60_000)).toBe(true)
        await advance(30_000)
        expect(await store.claim(id, DAY)).toBe(false)
        await advance(30_000)
        expect(await store.claim(id, DAY)).toBe(true)
      })

      it(`records with different TTLs MUST expire each at its own end (${mode})`, async (store, run) => {
        expect(await store.claim(`msg_${run}_long`, 120_000)).toBe(true)
        expect(await store.claim(`msg_${run}_short`, 60_000)).toBe(true)
        await advance(60_000)
        expect(await store.claim(`msg_${run}_short`, DAY)).toBe(true)
        expect(await store.claim(`msg_${run}_long`, DAY)).toBe(false)
        await advance(60_000)
        expect(await store.claim(`msg_${run}_long`, DAY)).toBe(true)
      })
    }
  })
}
