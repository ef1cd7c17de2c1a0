import { setClientAddress } from '@api-blocks/core'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { MemoryEviction } from './memory-store.ts'
import { MemoryIdempotencyStore } from './memory-store.ts'
import { idempotency } from './middleware.ts'
import type { StoredResponse } from './store.ts'

const response = (bytes: number): StoredResponse => ({
  status: 200,
  headers: [],
  body: new Uint8Array(bytes),
})
const RETENTION = 3_600_000

async function completed(
  store: MemoryIdempotencyStore,
  key: string,
  scope: string | undefined,
  bytes = 1,
  now = 0,
): Promise<void> {
  const claim = await store.claim(key, { fingerprint: 'f', owner: 'o', leaseMs: 1000, now, scope })
  expect(claim.state).toBe('claimed')
  await store.complete(key, 'o', { response: response(bytes), retentionMs: RETENTION, now })
}

const stateOf = async (store: MemoryIdempotencyStore, key: string, scope?: string) =>
  (await store.claim(key, { fingerprint: 'f', owner: 'p', leaseMs: 1000, now: 1, scope })).state

describe('MemoryIdempotencyStore: one scope cannot hurt another', () => {
  test("a scope's flood MUST NOT evict another scope's key: the flooding scope loses its own oldest", async () => {
    const evicted: [string, MemoryEviction][] = []
    const store = new MemoryIdempotencyStore({
      maxRecords: 100,
      maxRecordsPerScope: 4,
      onEvict: (key, eviction) => evicted.push([key, eviction]),
    })
    await completed(store, 'b-1', 'ip:198.51.100.2')
    for (let index = 0; index < 50; index++) await completed(store, `a-${index}`, 'sub:mallory')
    expect(await stateOf(store, 'b-1', 'ip:198.51.100.2')).toBe('completed')
    // Mallory holds at most her bound; what went was hers, oldest first, reported as hers.
    expect(store.size).toBeLessThanOrEqual(1 + 4)
    expect(evicted.length).toBeGreaterThan(40)
    expect(evicted.every(([, e]) => e.scope === 'sub:mallory' && e.reason === 'scope')).toBe(true)
    expect(evicted[0]?.[0]).toBe('a-0')
    expect(await stateOf(store, 'a-49', 'sub:mallory')).toBe('completed')
  })

  test('a scope whose records are all live claims is refused (scope-full); other scopes still claim', async () => {
    const store = new MemoryIdempotencyStore({ maxRecordsPerScope: 2 })
    const claim = (key: string, scope: string, now = 0) =>
      store.claim(key, { fingerprint: 'f', owner: 'o', leaseMs: 1000, now, scope })
    await claim('a-1', 'sub:a')
    await claim('a-2', 'sub:a')
    expect(await claim('a-3', 'sub:a')).toEqual({ state: 'scope-full' })
    expect((await claim('b-1', 'sub:b')).state).toBe('claimed')
    // Its own expired claims make room again.
    expect((await claim('a-3', 'sub:a', 1000)).state).toBe('claimed')
  })

  test("at maxRecords, completed records go from the scope holding the most, even when another scope's are older", async () => {
    const evicted: [string, MemoryEviction][] = []
    const store = new MemoryIdempotencyStore({
      maxRecords: 16,
      maxRecordsPerScope: 16,
      onEvict: (key, eviction) => evicted.push([key, eviction]),
    })
    await completed(store, 'b-oldest', 'sub:b')
    for (let index = 0; index < 15; index++) await completed(store, `a-${index}`, 'sub:a')
    await completed(store, 'c-1', 'sub:c')
    expect(evicted.map(([key]) => key)).toEqual(['a-0'])
    expect(evicted[0]?.[1]).toEqual({ scope: 'sub:a', reason: 'capacity' })
    expect(await stateOf(store, 'b-oldest', 'sub:b')).toBe('completed')
  })

  test('at maxBytes, responses go from the scope holding the most bytes', async () => {
    const evicted: string[] = []
    const store = new MemoryIdempotencyStore({
      maxBytes: 1000,
      onEvict: (key) => evicted.push(key),
    })
    await completed(store, 'b-small', 'sub:b', 10)
    for (let index = 0; index < 10; index++) await completed(store, `a-${index}`, 'sub:a', 200)
    expect(store.bytes).toBeLessThanOrEqual(1000)
    expect(evicted.length).toBeGreaterThan(0)
    expect(evicted.every((key) => key.startsWith('a-'))).toBe(true)
    expect(await stateOf(store, 'b-small', 'sub:b')).toBe('completed')
  })

  test('claims that name no scope are bounded by maxRecords only', async () => {
    const store = new MemoryIdempotencyStore({ maxRecords: 20, maxRecordsPerScope: 2 })
    for (let index = 0; index < 20; index++) {
      expect(
        (await store.claim(`k${index}`, { fingerprint: 'f', owner: 'o', leaseMs: 1000, now: 0 }))
          .state,
      ).toBe('claimed')
    }
  })

  test('maxRecordsPerScope is checked', () => {
    expect(() => new MemoryIdempotencyStore({ maxRecordsPerScope: 0 })).toThrow(RangeError)
    expect(() => new MemoryIdempotencyStore({ maxRecordsPerScope: 1.5 })).toThrow(RangeError)
  })

  test('random floods: a scope eviction takes the claiming scope only; a capacity eviction the scope holding the most', async () => {
    let evictions = 0
    await fc.assert(
      fc.asyncProperty(
        // Scope 0 floods; the others send now and then.
        fc.array(
          fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 4 })),
          {
            minLength: 50,
            maxLength: 300,
          },
        ),
        fc.integer({ min: 4, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        async (senders, maxRecords, maxRecordsPerScope) => {
          const held = new Map<string, number>()
          let claiming = ''
          const problems: string[] = []
          const store = new MemoryIdempotencyStore({
            maxRecords,
            maxRecordsPerScope,
            onEvict: (_key, { scope, reason }) => {
              evictions++
              const name = scope as string
              const mine = held.get(name) ?? 0
              if (reason === 'scope' && name !== claiming) problems.push(`${name} for ${claiming}`)
              if (reason === 'capacity') {
                for (const [other, count] of held) {
                  if (count > mine) problems.push(`${name} (${mine}) before ${other} (${count})`)
                }
              }
              held.set(name, mine - 1)
            },
          })
          let next = 0
          for (const sender of senders) {
            claiming = `s${sender}`
            const key = `k${next++}`
            const answer = await store
              .claim(key, { fingerprint: 'f', owner: 'o', leaseMs: 1000, now: 0, scope: claiming })
              .catch((error: unknown) => error)
            if (answer instanceof RangeError) continue
            held.set(claiming, (held.get(claiming) ?? 0) + 1)
            await store.complete(key, 'o', {
              response: response(1),
              retentionMs: RETENTION,
              now: 0,
            })
            for (const count of held.values()) expect(count).toBeLessThanOrEqual(maxRecordsPerScope)
          }
          expect(problems).toEqual([])
        },
      ),
      { numRuns: 200, interruptAfterTimeLimit: 10_000 },
    )
    expect(evictions).toBeGreaterThan(100)
  })
})

/**
 * Keyed POSTs through `idempotency()` over `store`, each from a client address. A request sent
 * with `hang` stays in flight (its claim live) until `finishAll()`. `executed` lists what ran.
 */
function clients(store: MemoryIdempotencyStore) {
  const middleware = idempotency({ store, clock: () => 1_700_000_000_000 })
  const executed: string[] = []
  const hanging: (() => void)[] = []
  const send = (address: string, key: string, hang = false) => {
    const request = new Request('https://api.example/v1/orders', {
      method: 'POST',
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
      body: '{"sku":"x"}',
    })
    setClientAddress(request, address)
    return middleware(request, async () => {
      if (hang) await new Promise<void>((resolve) => hanging.push(resolve))
      executed.push(`${address} ${key}`)
      return Response.json({ n: executed.length }, { status: 201 })
    })
  }
  const finishAll = () => {
    for (const resolve of hanging.splice(0)) resolve()
  }
  return { send, executed, finishAll }
}

describe('idempotency() over MemoryIdempotencyStore: a flood from one client', () => {
  test("MUST NOT make another client's retry execute twice: it is replayed", async () => {
    const { send, executed } = clients(
      new MemoryIdempotencyStore({ maxRecords: 64, maxRecordsPerScope: 8 }),
    )
    const first = await send('198.51.100.2', 'order-1')
    for (let index = 0; index < 200; index++) await send('203.0.113.66', `flood-${index}`)
    const retry = await send('198.51.100.2', 'order-1')
    expect(executed.filter((line) => line.startsWith('198.51.100.2'))).toHaveLength(1)
    expect(await retry.json()).toEqual(await first.json())
    expect(retry.status).toBe(201)
  })

  test('a client holding as many live claims as its bound gets 429 with Retry-After; the others are served and the breaker stays closed', async () => {
    // The flooding client's requests stay in flight: their claims stay live.
    const { send, finishAll } = clients(
      new MemoryIdempotencyStore({ maxRecords: 64, maxRecordsPerScope: 4 }),
    )
    const inFlight = Array.from({ length: 4 }, (_, index) =>
      send('203.0.113.66', `flood-${index}`, true),
    )
    await new Promise((resolve) => setTimeout(resolve, 10))
    // More refusals than the breaker's threshold: a full scope is an answer, not a store failure.
    for (let index = 0; index < 8; index++) {
      const refused = await send('203.0.113.66', `more-${index}`)
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toBe('1')
      expect((await refused.json()).type).toMatch(/too-many-requests$/)
    }
    expect((await send('198.51.100.2', 'order-1')).status).toBe(201)
    finishAll()
    for (const response of await Promise.all(inFlight)) expect(response.status).toBe(201)
  })

  test('a full store answers 503 STORE_FULL without opening the breaker; addresses of one IPv6 /56 share one bound', async () => {
    const { send, finishAll } = clients(
      new MemoryIdempotencyStore({ maxRecords: 8, maxRecordsPerScope: 4 }),
    )
    // One subscriber's /56: a fresh address per request still counts against one bound.
    const subscriber = Array.from({ length: 4 }, (_, index) =>
      send(`2001:db8:1:${index}::1`, `a-${index}`, true),
    )
    await new Promise((resolve) => setTimeout(resolve, 10))
    const sameNetwork = await send('2001:db8:1:ff::99', 'a-more')
    expect(sameNetwork.status).toBe(429)
    // Two more networks fill the store with live claims.
    const others = Array.from({ length: 4 }, (_, index) =>
      send(`198.51.100.${index + 1}`, `b-${index}`, true),
    )
    await new Promise((resolve) => setTimeout(resolve, 10))
    for (let index = 0; index < 8; index++) {
      const refused = await send('203.0.113.9', `c-${index}`)
      expect(refused.status).toBe(503)
      expect(refused.headers.get('retry-after')).toBe('1')
    }
    finishAll()
    await Promise.all([...subscriber, ...others])
    // The breaker stayed closed: with room again, the next client is served at once.
    expect((await send('192.0.2.7', 'd-1')).status).toBe(201)
  })
})
