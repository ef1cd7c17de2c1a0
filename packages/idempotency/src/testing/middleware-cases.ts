/**
 * The middleware over the store: one execution under concurrency, waiting duplicates, crash
 * recovery through the lease on the injected clock, stale owners, retention, reused keys,
 * scopes and streamed bodies.
 *
 * @module
 */
import { expect } from 'vitest'
import { idempotency } from '../middleware.ts'
import type { IdempotencyOptions } from '../options.ts'
import type { IdempotencyStore } from '../store.ts'
import type { SuiteContext } from './suite.ts'
import { allBytes, LEASE } from './suite.ts'

/** Registers the cases that run requests through the middleware over the store. */
export function middlewareCases(context: SuiteContext): void {
  const { it, t0, concurrency } = context
  const setup = (store: IdempotencyStore, extra: Partial<IdempotencyOptions> = {}) => {
    const clock = { now: t0 }
    let executions = 0
    // Claims answered so far, and waiters for a count: lets a handler hold on until the
    // other requests have really reached the store.
    let claims = 0
    const waiters: { count: number; resolve: () => void }[] = []
    const counting: IdempotencyStore = {
      claim: async (...args) => {
        const result = await store.claim(...args)
        claims++
        for (const waiter of waiters) if (claims >= waiter.count) waiter.resolve()
        return result
      },
      complete: (...args) => store.complete(...args),
      release: (...args) => store.release(...args),
      checkpoint: (...args) => store.checkpoint(...args),
    }
    const claimsReached = (count: number) =>
      new Promise<void>((resolve) => {
        if (claims >= count) resolve()
        else waiters.push({ count, resolve })
      })
    const scope = `scope-${crypto.randomUUID()}`
    const middleware = idempotency({
      store: counting,
      scope,
      leaseMs: LEASE,
      clock: () => clock.now,
      ...extra,
    })
    const handler = async (request: Request) => {
      executions++
      const order = (await request.json()) as { item: string }
      return Response.json({ id: executions, item: order.item }, { status: 201 })
    }
    const post = (idempotencyKey: string, body: unknown = { item: 'book' }) =>
      new Request('https://api.example/v1/orders', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify(body),
      })
    return { clock, middleware, handler, post, claimsReached, executions: () => executions }
  }

  it(`${concurrency} concurrent requests with one key MUST execute once; the rest replay or answer 409, none lost`, async (store) => {
    const { middleware, handler, post, executions, claimsReached } = setup(store)
    // The first execution holds on until half the requests have claimed: those see it in
    // flight, the later ones may find it completed.
    const slow = async (request: Request) => {
      await claimsReached(Math.ceil(concurrency / 2))
      return handler(request)
    }
    const responses = await Promise.all(
      Array.from({ length: concurrency }, () => middleware(post('"race"'), slow)),
    )
    const bodies = await Promise.all(responses.map((response) => response.text()))
    expect(executions()).toBe(1)
    const executed = responses.filter(
      (r) => r.status === 201 && !r.headers.has('idempotent-replayed'),
    )
    const replayed = responses.filter(
      (r) => r.status === 201 && r.headers.get('idempotent-replayed') === 'true',
    )
    const inFlight = responses.filter((r) => r.status === 409)
    expect(executed).toHaveLength(1)
    expect(inFlight.length).toBeGreaterThanOrEqual(Math.ceil(concurrency / 2) - 1)
    expect(executed.length + replayed.length + inFlight.length).toBe(concurrency)
    const first = bodies[responses.indexOf(executed[0] as Response)]
    for (const response of replayed) expect(bodies[responses.indexOf(response)]).toBe(first)
    for (const response of inFlight)
      expect(response.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/)
    // Afterwards every retry replays the one stored result.
    const after = await middleware(post('"race"'), handler)
    expect(after.headers.get('idempotent-replayed')).toBe('true')
    expect(await after.text()).toBe(first)
  })

  it(`${concurrency} concurrent requests that wait for the first MUST all get its response`, async (store) => {
    const { middleware, handler, post, executions, claimsReached } = setup(store, {
      waitForInFlight: { timeoutMs: 60_000, pollMs: 5 },
      // The clock stands still, so the lease cannot end while they wait.
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 5))),
    })
    // The first execution holds on until every request has claimed once: all the others
    // are then waiting on it.
    const slow = async (request: Request) => {
      await claimsReached(concurrency)
      return handler(request)
    }
    const responses = await Promise.all(
      Array.from({ length: concurrency }, () => middleware(post('wait'), slow)),
    )
    const bodies = new Set(await Promise.all(responses.map((response) => response.text())))
    expect(executions()).toBe(1)
    expect(responses.every((response) => response.status === 201)).toBe(true)
    expect(bodies.size).toBe(1)
  })

  it('a crash mid-request MUST block retries until the lease ends, then a retry MUST execute once', async (store) => {
    const { clock, middleware, handler, post, executions } = setup(store)
    let crash: (reason: Error) => void = () => {}
    let crashedRuns = 0
    let running: () => void = () => {}
    const started = new Promise<void>((resolve) => {
      running = resolve
    })
    const hung = middleware(post('crash'), async () => {
      crashedRuns++
      running()
      return new Promise<Response>((_, reject) => {
        crash = reject
      })
    })
    await started
    clock.now = t0 + LEASE - 1
    const blocked = await middleware(post('crash'), handler)
    expect(blocked.status).toBe(409)
    clock.now = t0 + LEASE
    const retried = await middleware(post('crash'), handler)
    expect(retried.status).toBe(201)
    const retriedBody = await retried.text()
    const replay = await middleware(post('crash'), handler)
    expect(await replay.text()).toBe(retriedBody)
    expect([crashedRuns, executions()]).toEqual([1, 1])
    // The crashed execution's late failure must not free the retried record.
    crash(new Error('process died'))
    await expect(hung).rejects.toThrow('process died')
    expect(await (await middleware(post('crash'), handler)).text()).toBe(retriedBody)
  })

  it('a stale owner MUST NOT overwrite the result of the execution that replaced it', async (store) => {
    const { clock, middleware, post } = setup(store)
    let finishSlow: () => void = () => {}
    let running: () => void = () => {}
    const started = new Promise<void>((resolve) => {
      running = resolve
    })
    const slow = middleware(post('stale'), async () => {
      running()
      await new Promise<void>((resolve) => {
        finishSlow = resolve
      })
      return new Response('slow', { status: 201 })
    })
    await started
    clock.now = t0 + LEASE
    const fast = await middleware(post('stale'), async () => new Response('fast', { status: 201 }))
    expect(await fast.text()).toBe('fast')
    finishSlow()
    expect(await (await slow).text()).toBe('slow') // its client still gets its answer
    const replay = await middleware(post('stale'), async () => new Response('again'))
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(await replay.text()).toBe('fast')
  })

  it('a record MUST expire after retention, then the key executes again', async (store) => {
    const { clock, middleware, handler, post, executions } = setup(store, {
      retentionMs: 60_000,
    })
    await (await middleware(post('expire'), handler)).text()
    clock.now = t0 + 59_999
    expect((await middleware(post('expire'), handler)).headers.get('idempotent-replayed')).toBe(
      'true',
    )
    clock.now = t0 + 60_000
    const again = await middleware(post('expire'), handler)
    expect(again.headers.has('idempotent-replayed')).toBe(false)
    expect(executions()).toBe(2)
  })

  it('the same key with another body MUST answer 409 (spec profile) and 422 (ietf profile)', async (store) => {
    const spec = setup(store)
    await (await spec.middleware(spec.post('reuse', { item: 'book' }), spec.handler)).text()
    const conflict = await spec.middleware(spec.post('reuse', { item: 'lamp' }), spec.handler)
    expect(conflict.status).toBe(409)
    expect(((await conflict.json()) as { type: string }).type).toMatch(/idempotency-key-reused$/)
    const ietf = setup(store, { profile: 'ietf' })
    await (await ietf.middleware(ietf.post('reuse', { item: 'book' }), ietf.handler)).text()
    expect((await ietf.middleware(ietf.post('reuse', { item: 'lamp' }), ietf.handler)).status).toBe(
      422,
    )
    expect(spec.executions() + ietf.executions()).toBe(2)
  })

  it('one key in two scopes MUST execute twice and never replay across scopes', async (store) => {
    const alice = setup(store)
    const bob = setup(store)
    const a = await (
      await alice.middleware(alice.post('shared', { item: 'a' }), alice.handler)
    ).json()
    const b = await bob.middleware(bob.post('shared', { item: 'b' }), bob.handler)
    expect(b.headers.has('idempotent-replayed')).toBe(false)
    expect(await b.json()).not.toEqual(a)
    expect(alice.executions() + bob.executions()).toBe(2)
  })

  it('a streamed response body MUST be replayed byte for byte', async (store) => {
    const { middleware, post } = setup(store)
    const chunks = [allBytes(1000), allBytes(70_000), new Uint8Array([0, 255, 13, 10])]
    const streamed = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (const chunk of chunks) controller.enqueue(chunk)
            controller.close()
          },
        }),
        { status: 200, headers: { 'content-type': 'application/octet-stream' } },
      )
    const first = new Uint8Array(
      await (await middleware(post('stream'), async () => streamed())).arrayBuffer(),
    )
    const replay = await middleware(post('stream'), async () => new Response('wrong'))
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.headers.get('content-type')).toBe('application/octet-stream')
    const replayed = new Uint8Array(await replay.arrayBuffer())
    expect(replayed.length).toBe(71_004)
    expect([...replayed]).toEqual([...first])
  })
}
