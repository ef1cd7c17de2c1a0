/**
 * The conformance suite of {@link EndpointStore}: every endpoint store (memory, PostgreSQL,
 * yours) registers it in its own test file and must pass it unchanged. It checks the contract
 * of `endpoint-store.ts` method by method: records round-trip unchanged, an id is inserted
 * once, `update` applies only what it names and adds one to `version` atomically, with the
 * compare-and-set on `expectedVersion` (one winner of 50 racing updates), `list` pages in id
 * order with the owner filter, `subscribed` answers only enabled endpoints that take the type.
 *
 * Every test uses fresh random ids, owners and event types, so the suite can run against a
 * shared database without cleaning it (results are filtered to the test's own records).
 *
 * @module
 */
import { describe, expect } from 'vitest'
import type { EndpointStore, WebhookEndpoint } from '../endpoint-store.ts'
import { AWKWARD, promised, randomId, registrar } from './shared.ts'

/**
 * Options of {@link runEndpointStoreConformance}.
 *
 * @example
 * ```ts
 * const options: EndpointStoreConformanceOptions = { cleanup: (store) => store.delete('we_leftover').then(() => {}) }
 * ```
 */
export interface EndpointStoreConformanceOptions {
  /** Called after each test with its store (close a client, delete rows). */
  readonly cleanup?: (store: EndpointStore) => void | Promise<void>
  /** Per-test timeout in milliseconds (default 20,000). */
  readonly timeoutMs?: number
  /** How many calls race in the concurrency tests (default 50, at least 2). */
  readonly concurrency?: number
}

const T0 = 1_700_000_000_000

/** An endpoint of this test (`run`), with id `we_<run>_<n>`. */
function endpoint(run: string, n: number, extra: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: `we_${run}_${String(n).padStart(3, '0')}`,
    url: `https://hooks.example.com/${run}/orders?x=1&y=%20`,
    events: ['order.created', 'order.paid'],
    status: 'enabled',
    disabledReason: null,
    secrets: [{ value: `whsec_${randomId()}${randomId()}`, createdAt: T0, expiresAt: null }],
    owner: `owner-${run}`,
    createdAt: T0,
    updatedAt: T0,
    version: 1,
    ...extra,
  }
}

/** The ids of `endpoints` that belong to this test. */
function ours(endpoints: readonly WebhookEndpoint[], run: string): string[] {
  return endpoints.map((e) => e.id).filter((id) => id.startsWith(`we_${run}_`))
}

/**
 * Registers the conformance tests of an {@link EndpointStore} with vitest (an optional peer
 * dependency of this package). Call it at the top level of a test file.
 *
 * @param name shown in the test names, e.g. `postgres`.
 * @param makeStore gives a ready store for one test; called once per test.
 *
 * @example
 * ```ts
 * import { MemoryEndpointStore } from '@api-blocks/webhooks'
 * import { runEndpointStoreConformance } from '@api-blocks/webhooks/testing'
 *
 * runEndpointStoreConformance('memory', () => new MemoryEndpointStore())
 * ```
 */
export function runEndpointStoreConformance(
  name: string,
  makeStore: () => EndpointStore | Promise<EndpointStore>,
  options: EndpointStoreConformanceOptions = {},
): void {
  const { it, concurrency } = registrar('runEndpointStoreConformance', makeStore, options, randomId)

  describe(`EndpointStore conformance: ${name}`, () => {
    it('every method MUST return a Promise', async (store, run) => {
      const record = endpoint(run, 1)
      expect(await promised(store.insert(record))).toBeUndefined()
      expect(await promised(store.get(record.id))).toEqual(record)
      expect(await promised(store.list({ owner: record.owner, limit: 10 }))).toEqual([record])
      expect(ours(await promised(store.subscribed('order.created')), run)).toEqual([record.id])
      expect(await promised(store.update(record.id, { updatedAt: T0 + 1 }, 1))).toBeDefined()
      expect(await promised(store.delete(record.id))).toBe(true)
    })

    it('an inserted endpoint MUST round-trip unchanged, unusual characters included', async (store, run) => {
      const record = endpoint(run, 1, {
        url: `https://hooks.example.com/${encodeURIComponent(AWKWARD)}?q='"`,
        events: ['order.created', "a'b.c", 'ü.ß'],
        owner: `client:${AWKWARD}`,
        disabledReason: AWKWARD,
        status: 'disabled',
        secrets: [
          { value: `whsec_${randomId()}`, createdAt: T0, expiresAt: null },
          { value: `sealed:${AWKWARD}`, createdAt: T0 - 1000, expiresAt: T0 + 86_400_000 },
        ],
      })
      await store.insert(record)
      expect(await store.get(record.id)).toEqual(record)
      const open = endpoint(run, 2, { events: null, secrets: [] })
      await store.insert(open)
      expect(await store.get(open.id)).toEqual(open)
      expect(await store.get(`we_${run}_absent`)).toBeUndefined()
    })

    it('insert MUST reject an id that is taken and leave the first record', async (store, run) => {
      const first = endpoint(run, 1)
      await store.insert(first)
      await expect(
        store.insert(endpoint(run, 1, { url: 'https://other.example/' })),
      ).rejects.toThrow()
      expect(await store.get(first.id)).toEqual(first)
    })

    it('records MUST NOT change when a caller mutates what it passed or got', async (store, run) => {
      const record = endpoint(run, 1)
      const expected = structuredClone(record)
      await store.insert(record)
      ;(record.events as string[]).push('order.refunded')
      ;(record.secrets[0] as { value: string }).value = 'changed'
      record.url = 'https://changed.example/'
      const got = (await store.get(record.id))!
      ;(got.events as string[]).length = 0
      ;(got.secrets[0] as { expiresAt: number | null }).expiresAt = 1
      got.status = 'disabled'
      expect(await store.get(record.id)).toEqual(expected)
      const updated = (await store.update(record.id, { updatedAt: T0 + 1 }))!
      ;(updated.events as string[]).push('x.y')
      expect((await store.get(record.id))!.events).toEqual(expected.events)
    })

    it('update MUST apply the members it names, keep the others and add one to version', async (store, run) => {
      const record = endpoint(run, 1)
      await store.insert(record)
      const secrets = [
        { value: `whsec_${randomId()}`, createdAt: T0 + 5, expiresAt: null },
        { ...record.secrets[0]!, expiresAt: T0 + 86_400_000 },
      ]
      const disabled = await store.update(
        record.id,
        { status: 'disabled', disabledReason: 'gone', secrets, updatedAt: T0 + 5 },
        1,
      )
      const expected = {
        ...record,
        status: 'disabled',
        disabledReason: 'gone',
        secrets,
        updatedAt: T0 + 5,
        version: 2,
      }
      expect(disabled).toEqual(expected)
      expect(await store.get(record.id)).toEqual(expected)
      const moved = await store.update(record.id, {
        url: 'https://hooks.example.com/v2',
        events: null,
        status: 'enabled',
        disabledReason: null,
        updatedAt: T0 + 9,
      })
      expect(moved).toEqual({
        ...expected,
        url: 'https://hooks.example.com/v2',
        events: null,
        status: 'enabled',
        disabledReason: null,
        updatedAt: T0 + 9,
        version: 3,
      })
      expect(
        await store.update(record.id, { events: [], secrets: [], updatedAt: T0 + 10 }),
      ).toMatchObject({
        events: [],
        secrets: [],
        version: 4,
        createdAt: T0,
        owner: record.owner,
      })
    })

    it('update MUST answer undefined and write nothing for an unknown id or a stale expectedVersion', async (store, run) => {
      expect(
        await store.update(`we_${run}_absent`, { status: 'disabled', updatedAt: T0 }),
      ).toBeUndefined()
      expect(await store.get(`we_${run}_absent`)).toBeUndefined()
      const record = endpoint(run, 1)
      await store.insert(record)
      expect(
        await store.update(record.id, { url: 'https://a.example/', updatedAt: T0 + 1 }, 1),
      ).toBeDefined()
      expect(
        await store.update(record.id, { url: 'https://b.example/', updatedAt: T0 + 2 }, 1),
      ).toBeUndefined()
      expect(
        await store.update(record.id, { url: 'https://b.example/', updatedAt: T0 + 2 }, 3),
      ).toBeUndefined()
      expect(await store.get(record.id)).toEqual({
        ...record,
        url: 'https://a.example/',
        updatedAt: T0 + 1,
        version: 2,
      })
    })

    it(`of ${concurrency} concurrent updates at one expectedVersion exactly one MUST apply`, async (store, run) => {
      const record = endpoint(run, 1)
      await store.insert(record)
      const answers = await Promise.all(
        Array.from({ length: concurrency }, (_, i) =>
          store.update(record.id, { disabledReason: `r${i}`, updatedAt: T0 + i }, 1),
        ),
      )
      const applied = answers.filter((answer) => answer !== undefined)
      expect(applied).toHaveLength(1)
      expect(await store.get(record.id)).toEqual(applied[0])
      expect(applied[0]!.version).toBe(2)
    })

    it(`${concurrency} concurrent updates without expectedVersion MUST each add one to version`, async (store, run) => {
      const record = endpoint(run, 1)
      await store.insert(record)
      const answers = await Promise.all(
        Array.from({ length: concurrency }, (_, i) =>
          store.update(record.id, { updatedAt: T0 + i }),
        ),
      )
      expect(answers.map((answer) => answer!.version).sort((a, b) => a - b)).toEqual(
        Array.from({ length: concurrency }, (_, i) => i + 2),
      )
      expect((await store.get(record.id))!.version).toBe(concurrency + 1)
    })

    it('delete MUST remove the endpoint and answer whether it existed', async (store, run) => {
      const record = endpoint(run, 1)
      await store.insert(record)
      expect(await store.delete(record.id)).toBe(true)
      expect(await store.get(record.id)).toBeUndefined()
      expect(await store.delete(record.id)).toBe(false)
      expect(await store.update(record.id, { updatedAt: T0 })).toBeUndefined()
      expect(await store.list({ owner: record.owner, limit: 10 })).toEqual([])
    })

    it('list MUST page in ascending id order strictly after `after`, at most `limit`', async (store, run) => {
      const records = [4, 1, 3, 0, 2].map((n) => endpoint(run, n))
      for (const record of records) await store.insert(record)
      const owner = `owner-${run}`
      const sorted = [...records].sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(await store.list({ owner, limit: 10 })).toEqual(sorted)
      expect(await store.list({ owner, limit: 2 })).toEqual(sorted.slice(0, 2))
      expect(await store.list({ owner, limit: 2, after: sorted[1]!.id })).toEqual(
        sorted.slice(2, 4),
      )
      expect(await store.list({ owner, limit: 2, after: sorted[3]!.id })).toEqual(sorted.slice(4))
      expect(await store.list({ owner, limit: 2, after: sorted[4]!.id })).toEqual([])
      // `after` need not be an existing id.
      expect(await store.list({ owner, limit: 10, after: `${sorted[1]!.id}0` })).toEqual(
        sorted.slice(2),
      )
    })

    it('list MUST filter by owner when given (null matching unowned endpoints) and not otherwise', async (store, run) => {
      const a = endpoint(run, 1, { owner: `owner-${run}` })
      const b = endpoint(run, 2, { owner: `other-${run}` })
      const c = endpoint(run, 3, { owner: null })
      for (const record of [a, b, c]) await store.insert(record)
      expect(await store.list({ owner: `owner-${run}`, limit: 10 })).toEqual([a])
      expect(await store.list({ owner: `other-${run}`, limit: 10 })).toEqual([b])
      // Starting at this test's prefix, its own endpoints come first.
      expect(await store.list({ owner: null, limit: 1, after: `we_${run}_` })).toEqual([c])
      expect(await store.list({ limit: 3, after: `we_${run}_` })).toEqual([a, b, c])
    })

    it('subscribed MUST answer the enabled endpoints taking the type (or every type), ids ascending', async (store, run) => {
      const type = `t${run.replace(/[^a-z]/g, '').slice(0, 8) || 'x'}.created`
      const all = endpoint(run, 5, { events: null })
      const one = endpoint(run, 2, { events: ['order.paid', type] })
      const other = endpoint(run, 3, { events: ['order.paid'] })
      const none = endpoint(run, 4, { events: [] })
      const off = endpoint(run, 1, { events: [type], status: 'disabled', disabledReason: 'manual' })
      for (const record of [all, one, other, none, off]) await store.insert(record)
      expect((await store.subscribed(type)).filter((e) => e.id.startsWith(`we_${run}_`))).toEqual([
        one,
        all,
      ])
      expect(ours(await store.subscribed('order.paid'), run)).toEqual([one.id, other.id, all.id])
      await store.update(off.id, { status: 'enabled', disabledReason: null, updatedAt: T0 + 1 })
      await store.update(all.id, { status: 'disabled', disabledReason: 'gone', updatedAt: T0 + 1 })
      await store.delete(one.id)
      expect(ours(await store.subscribed(type), run)).toEqual([off.id])
      // A type is matched whole: a prefix or a different case is another type.
      expect(ours(await store.subscribed(type.slice(0, -1)), run)).toEqual([])
      expect(ours(await store.subscribed(type.toUpperCase()), run)).toEqual([])
    })
  })
}
