// completeWith: the handler completes its record itself, inside its own transaction, so that its
// write and the completed record commit together (docs/idempotency.md, "Completing in your
// transaction"). The "transaction" here is a store that applies or drops what it was given.
import { describe, expect, test } from 'vitest'
import { idempotencyContext } from './context.ts'
import { IdempotencyError } from './error.ts'
import { MemoryIdempotencyStore } from './memory-store.ts'
import { idempotency } from './middleware.ts'
import type { IdempotencyEvent, IdempotencyOptions } from './options.ts'
import type { IdempotencyCompletion, IdempotencyStore } from './store.ts'

const T0 = 1_700_000_000_000

/** The middleware's store, counting the completions the middleware itself makes. */
class CountingStore extends MemoryIdempotencyStore {
  completions = 0
  override complete(key: string, owner: string, completion: IdempotencyCompletion) {
    this.completions += 1
    return super.complete(key, owner, completion)
  }
}

/**
 * A store "bound to a transaction": its completion is applied to `records` at commit, or
 * dropped at rollback; `answer` forces what `complete` answers.
 */
function transaction(records: IdempotencyStore, answer?: boolean | Error) {
  const pending: (() => Promise<boolean>)[] = []
  const store: IdempotencyStore = {
    claim: () => Promise.reject(new Error('not in a transaction')),
    release: () => Promise.reject(new Error('not in a transaction')),
    checkpoint: () => Promise.reject(new Error('not in a transaction')),
    complete: async (key, owner, completion) => {
      if (answer instanceof Error) throw answer
      if (answer !== undefined) return answer
      pending.push(() => records.complete(key, owner, completion))
      return true
    },
  }
  return {
    store,
    commit: async () => {
      for (const apply of pending) expect(await apply()).toBe(true)
    },
  }
}

function setup(options: Partial<IdempotencyOptions> = {}) {
  const clock = { now: T0 }
  const events: IdempotencyEvent[] = []
  const records = new CountingStore()
  const middleware = idempotency({
    store: records,
    scope: 'tenant',
    clock: () => clock.now,
    onEvent: (event) => events.push(event),
    ...options,
  })
  return { middleware, records, events, clock }
}

const post = (key: string, body = '{"sku":"A-1"}') =>
  new Request('https://api.test/v1/orders', {
    method: 'POST',
    headers: { 'idempotency-key': key, 'content-type': 'application/json' },
    body,
  })

describe('IdempotencyContext.completeWith', () => {
  test('stores the response in the handler’s transaction; the middleware does not store it again', async () => {
    const { middleware, records, events } = setup()
    let executions = 0
    const handler = async (request: Request) => {
      executions += 1
      const tx = transaction(records)
      const context = idempotencyContext(request)
      const answer = Response.json({ id: 'ord_1' }, { status: 201, headers: { location: '/o/1' } })
      const response = (await context?.completeWith(answer, tx.store)) ?? answer
      await tx.commit()
      return response
    }
    const first = await middleware(post('k1'), handler)
    expect(first.status).toBe(201)
    expect(await first.json()).toEqual({ id: 'ord_1' })
    // One completion: the transaction's (applied at commit), none by the middleware after it.
    expect(records.completions).toBe(1)
    expect(events.filter((event) => event.type === 'stored')).toHaveLength(1)
    const replay = await middleware(post('k1'), handler)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.headers.get('location')).toBe('/o/1')
    expect(await replay.json()).toEqual({ id: 'ord_1' })
    expect(executions).toBe(1)
  })

  test('the same storage policy as the middleware: omitted fields, status policy, size cap', async () => {
    const { middleware, records } = setup({ maxStoredBytes: 16, omitHeaders: ['x-secret'] })
    const run = (key: string, answer: () => Response) =>
      middleware(post(key), async (request) => {
        const tx = transaction(records)
        const response = await idempotencyContext(request)!.completeWith(answer(), tx.store)
        await tx.commit()
        return response
      })
    // Omitted header fields are not stored (nor `set-cookie`, never replayed).
    await run('fields', () => new Response('ok', { status: 201, headers: { 'x-secret': 's' } }))
    const replay = await run('fields', () => new Response('other'))
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.headers.get('x-secret')).toBeNull()
    // A 503 is never stored: nothing written, the middleware releases, the retry executes.
    let runs = 0
    const unavailable = () => {
      runs += 1
      return new Response('down', { status: 503 })
    }
    expect((await run('status', unavailable)).status).toBe(503)
    expect((await run('status', unavailable)).status).toBe(503)
    expect(runs).toBe(2)
    // Over maxStoredBytes: not stored, the whole body still reaches the client.
    const big = 'x'.repeat(100)
    const large = await run('large', () => new Response(big, { status: 201 }))
    expect(await large.text()).toBe(big)
    const again = await run('large', () => new Response('again', { status: 201 }))
    expect(again.headers.get('idempotent-replayed')).toBeNull()
    expect(await again.text()).toBe('again')
  })

  test('MUST NOT store when the fence fails: IDEMPOTENCY_LEASE_LOST (409), the lost event', async () => {
    const { middleware, records, events } = setup()
    let caught: unknown
    const response = await middleware(post('k1'), async (request) => {
      try {
        return await idempotencyContext(request)!.completeWith(
          new Response('created', { status: 201 }),
          transaction(records, false).store,
        )
      } catch (error) {
        caught = error // the caller rolls its transaction back here
        return new Response('rolled back', { status: 409 })
      }
    })
    expect(caught).toBeInstanceOf(IdempotencyError)
    expect(caught).toMatchObject({ code: 'IDEMPOTENCY_LEASE_LOST', status: 409 })
    expect(events).toContainEqual({
      type: 'lost',
      storeKey: expect.any(String),
      operation: 'complete',
    })
    expect(response.status).toBe(409)
    // Nothing stored: the 409 is not stored either, so the retry executes.
    const retry = await middleware(post('k1'), async () => new Response('second', { status: 201 }))
    expect(await retry.text()).toBe('second')
  })

  test('a store that fails inside the transaction: STORE_UNAVAILABLE (503) and the store-error event', async () => {
    const { middleware, records, events } = setup()
    const failure = new Error('connection reset')
    let caught: unknown
    await middleware(post('k1'), async (request) => {
      caught = await idempotencyContext(request)!
        .completeWith(new Response('x', { status: 201 }), transaction(records, failure).store)
        .catch((error: unknown) => error)
      return new Response('failed', { status: 503 })
    })
    expect(caught).toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503, cause: failure })
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'store-error', operation: 'complete', error: failure }),
    )
  })

  test('the transaction fails after completeWith: nothing committed, the key is freed, the retry executes once', async () => {
    const { middleware, records } = setup()
    const orders: string[] = []
    let failCommit = true
    const handler = async (request: Request) => {
      const tx = transaction(records)
      const written: string[] = ['order'] // the insert, pending in the transaction
      const response = await idempotencyContext(request)!.completeWith(
        new Response('created', { status: 201 }),
        tx.store,
      )
      if (failCommit) {
        failCommit = false
        throw new Error('COMMIT failed') // both the insert and the completion are rolled back
      }
      orders.push(...written)
      await tx.commit()
      return response
    }
    await expect(middleware(post('k1'), handler)).rejects.toThrow('COMMIT failed')
    expect(orders).toEqual([])
    const retry = await middleware(post('k1'), handler)
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBeNull()
    expect(orders).toEqual(['order'])
    const replay = await middleware(post('k1'), handler)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(orders).toEqual(['order'])
  })

  test('a handler that answers another Response after completeWith: the middleware settles that one', async () => {
    const { middleware, records } = setup()
    // The transaction rolled back (the completion with it) and an error boundary answered 503.
    const response = await middleware(post('k1'), async (request) => {
      await idempotencyContext(request)!.completeWith(
        new Response('created', { status: 201 }),
        transaction(records).store, // never committed
      )
      return new Response('unavailable', { status: 503 })
    })
    expect(response.status).toBe(503)
    const retry = await middleware(post('k1'), async () => new Response('ran', { status: 201 }))
    expect(await retry.text()).toBe('ran')
  })

  test('called twice → TypeError', async () => {
    const { middleware, records } = setup()
    let second: unknown
    await middleware(post('k1'), async (request) => {
      const context = idempotencyContext(request)!
      const tx = transaction(records)
      const response = await context.completeWith(new Response('a', { status: 201 }), tx.store)
      second = await context
        .completeWith(new Response('b', { status: 201 }), tx.store)
        .catch((error: unknown) => error)
      await tx.commit()
      return response
    })
    expect(second).toBeInstanceOf(TypeError)
  })
})

test('the middleware reports a completion that found its claim gone (lease ended) as lost', async () => {
  const { middleware, events, clock } = setup({ leaseMs: 1000 })
  const response = await middleware(post('k1'), async () => {
    clock.now += 5000 // the handler outlived its lease
    return new Response('late', { status: 201 })
  })
  expect(await response.text()).toBe('late')
  expect(events).toContainEqual({
    type: 'lost',
    storeKey: expect.any(String),
    operation: 'complete',
  })
})
