// A store that hangs or fails must not take the service with it: the middleware answers within
// `storeTimeoutMs` (503 with Retry-After, fail closed), and not at all while the breaker knows
// the store is down. The real servers (a paused, killed and restarted Redis or PostgreSQL) are in
// the store packages' fault tests; these use a store that never answers.
import { describe, expect, test } from 'vitest'
import { MemoryIdempotencyStore } from './memory-store.ts'
import { idempotency } from './middleware.ts'
import type { IdempotencyEvent, IdempotencyOptions } from './options.ts'
import type { IdempotencyStore } from './store.ts'

const T0 = 1_700_000_000_000

type Operation = 'claim' | 'complete' | 'release' | 'checkpoint'

/** A memory store whose operations can be made to hang (a paused server) or fail. */
class FaultyStore implements IdempotencyStore {
  readonly inner = new MemoryIdempotencyStore()
  readonly calls: Operation[] = []
  hanging = new Set<Operation>()
  failing = new Set<Operation>()
  /** Operations held while hanging: run them to let the store answer late. */
  readonly held: (() => void)[] = []

  #run<T>(operation: Operation, run: () => Promise<T>): Promise<T> {
    this.calls.push(operation)
    if (this.failing.has(operation)) return Promise.reject(new Error(`${operation}: ECONNREFUSED`))
    if (!this.hanging.has(operation)) return run()
    return new Promise<T>((resolve, reject) => {
      this.held.push(() => run().then(resolve, reject))
    })
  }
  claim: IdempotencyStore['claim'] = (...args) =>
    this.#run('claim', () => this.inner.claim(...args))
  complete: IdempotencyStore['complete'] = (...args) =>
    this.#run('complete', () => this.inner.complete(...args))
  release: IdempotencyStore['release'] = (...args) =>
    this.#run('release', () => this.inner.release(...args))
  checkpoint: IdempotencyStore['checkpoint'] = (...args) =>
    this.#run('checkpoint', () => this.inner.checkpoint(...args))
}

function setup(overrides: Partial<IdempotencyOptions> = {}) {
  const store = new FaultyStore()
  const clock = { now: T0 }
  const events: IdempotencyEvent[] = []
  let runs = 0
  const middleware = idempotency({
    store,
    scope: 'client-1',
    clock: () => clock.now,
    storeTimeoutMs: 20,
    onEvent: (event) => events.push(event),
    ...overrides,
  })
  const handler = async () => Response.json({ run: ++runs }, { status: 201 })
  return { store, clock, events, middleware, handler, runs: () => runs }
}

const post = (key: string) =>
  new Request('https://api.example/v1/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: '{"amount":1}',
  })

async function expectUnavailable(response: Response, retryAfter: string): Promise<void> {
  expect(response.status).toBe(503)
  expect(response.headers.get('retry-after')).toBe(retryAfter)
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  expect((await response.json()).type).toMatch(/service-unavailable$/)
}

describe('idempotency with a store that fails or hangs', () => {
  test('MUST answer a failing claim with 503, Retry-After and a problem; nothing runs', async () => {
    const { store, middleware, handler, runs } = setup()
    store.failing.add('claim')
    await expectUnavailable(await middleware(post('k1'), handler), '1')
    expect(runs()).toBe(0)
  })

  test('MUST answer a claim the store never answers within storeTimeoutMs: 503, Retry-After; nothing runs', async () => {
    const { store, middleware, handler, runs, events } = setup()
    store.hanging.add('claim')
    await expectUnavailable(await middleware(post('k1'), handler), '1')
    expect(runs()).toBe(0)
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'store-error',
        operation: 'claim',
        error: expect.objectContaining({ code: 'STORE_TIMEOUT' }),
      }),
    )
  })

  test('a claim that lands after the deadline is released, so the retry runs (no 409 in flight)', async () => {
    const { store, middleware, handler, runs } = setup()
    store.hanging.add('claim')
    await expectUnavailable(await middleware(post('k1'), handler), '1')
    store.hanging.clear()
    // The store answers the first claim now: it takes the key, and is released at once.
    for (const late of store.held.splice(0)) late()
    await expect.poll(() => store.calls.at(-1)).toBe('release')
    const retry = await middleware(post('k1'), handler)
    expect(retry.status).toBe(201)
    expect(runs()).toBe(1)
  })

  test('MUST NOT wait for a store known to be down: the breaker answers 503 at once, then a probe recovers', async () => {
    const { store, clock, middleware, handler, runs } = setup({
      storeBreaker: { failureThreshold: 2, cooldownMs: 3_000 },
    })
    store.hanging.add('claim')
    await expectUnavailable(await middleware(post('a'), handler), '1')
    // The second failure in a row opens the breaker: try again when it lets a probe through.
    await expectUnavailable(await middleware(post('b'), handler), '3')
    expect(store.calls).toEqual(['claim', 'claim'])
    clock.now += 1_000
    // Open: refused without a store call, Retry-After the cooldown left.
    await expectUnavailable(await middleware(post('c'), handler), '2')
    expect(store.calls).toHaveLength(2)
    store.hanging.clear()
    clock.now += 2_000
    expect((await middleware(post('d'), handler)).status).toBe(201)
    expect((await middleware(post('e'), handler)).status).toBe(201)
    expect(runs()).toBe(2)
  })

  test('a complete the store never answers: the response goes out, the event says so', async () => {
    const { store, middleware, handler, events } = setup()
    store.hanging.add('complete')
    const response = await middleware(post('k1'), handler)
    expect(response.status).toBe(201)
    expect(await response.json()).toEqual({ run: 1 })
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'store-error',
        operation: 'complete',
        error: expect.objectContaining({ code: 'STORE_TIMEOUT' }),
      }),
    )
  })

  test('a release the store never answers: the handler’s error still propagates', async () => {
    const { store, middleware } = setup()
    store.hanging.add('release')
    await expect(
      middleware(post('k1'), async () => {
        throw new Error('handler failed')
      }),
    ).rejects.toThrow('handler failed')
  })

  test('refuses a storeTimeoutMs that is not positive', () => {
    expect(() => setup({ storeTimeoutMs: -1 })).toThrow(RangeError)
  })
})
