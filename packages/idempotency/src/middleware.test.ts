import {
  BodyReadError,
  defineBodySlots,
  getContext,
  setClientAddress,
  setContext,
  setPrincipal,
  sharedContextKey,
  takeParsedJson,
} from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import { idempotencyContext } from './context.ts'
import { IdempotencyError } from './error.ts'
import { MemoryIdempotencyStore } from './memory-store.ts'
import { idempotency } from './middleware.ts'
import type { IdempotencyEvent, IdempotencyOptions } from './options.ts'
import type { IdempotencyStore } from './store.ts'

const T0 = 1_700_000_000_000

/** A memory store that counts calls and can be told to fail. */
class SpyStore implements IdempotencyStore {
  readonly inner = new MemoryIdempotencyStore()
  readonly calls: string[] = []
  failing = new Set<string>()

  // Answers with promises, as a network store does.
  async #run<T>(operation: string, run: () => T | Promise<T>): Promise<T> {
    this.calls.push(operation)
    if (this.failing.has(operation)) throw new Error(`${operation}: ECONNREFUSED`)
    return run()
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

/** A Response that holds its body in memory, as `@api-blocks/node`'s does (wholeBodyOf). */
class HoldingResponse extends Response {
  readonly kept: string | Uint8Array | null
  /** Whether anything asked for the body stream. */
  streamRead = false
  constructor(kept: string | Uint8Array | null, init?: ResponseInit) {
    super('never read', init)
    this.kept = kept
    const stream = Object.getOwnPropertyDescriptor(Response.prototype, 'body')?.get
    Object.defineProperty(this, 'body', {
      get: () => {
        this.streamRead = true
        return stream?.call(this)
      },
    })
  }
}
defineBodySlots(HoldingResponse.prototype, {
  wholeBody() {
    return this.kept
  },
})
const holdingResponse = (kept: string | Uint8Array | null, init?: ResponseInit) =>
  new HoldingResponse(kept, init)

/** A Request that holds bytes a body parser read (wholeBodyOf), its stream something else. */
class HoldingRequest extends Request {
  readonly kept: Uint8Array
  constructor(request: Request, text: string) {
    super(request)
    this.kept = new TextEncoder().encode(text)
  }
  override async text(): Promise<string> {
    return new TextDecoder().decode(this.kept)
  }
}
defineBodySlots(HoldingRequest.prototype, {
  wholeBody() {
    return this.kept
  },
})

/** A Request that takes back the bytes read from its stream (restoreBody), or refuses to. */
class RestoringRequest extends Request {
  readonly accepts: boolean
  restored: Uint8Array | undefined
  constructor(request: Request, accepts = true) {
    super(request)
    this.accepts = accepts
  }
}
defineBodySlots(RestoringRequest.prototype, {
  wholeBody() {
    return this.restored
  },
  restoreBody(bytes) {
    if (!this.accepts) return false
    this.restored = bytes
    return true
  },
})

function setup(options: Partial<IdempotencyOptions> = {}) {
  const store = new SpyStore()
  const clock = { now: T0 }
  const events: IdempotencyEvent[] = []
  const middleware = idempotency({
    store,
    scope: 'tenant-1',
    clock: () => clock.now,
    onEvent: (event) => events.push(event),
    ...options,
  })
  let runs = 0
  const received: Request[] = []
  const handler = async (request: Request) => {
    runs++
    received.push(request)
    const order = (await request.json()) as Record<string, unknown>
    return Response.json(
      { id: `ord_${runs}`, ...order },
      {
        status: 201,
        headers: {
          location: `/v1/orders/ord_${runs}`,
          'set-cookie': 'session=secret',
          date: 'Tue, 01 Apr 2025 10:00:00 GMT',
        },
      },
    )
  }
  return { store, clock, events, middleware, handler, received, runs: () => runs }
}

function post(
  key: string | null,
  body: string = '{"item":"book","qty":1}',
  init: RequestInit = {},
) {
  const headers = new Headers(init.headers)
  headers.set('content-type', 'application/json')
  if (key !== null) headers.set('idempotency-key', key)
  return new Request('https://api.example/v1/orders', { method: 'POST', body, ...init, headers })
}

interface WireProblem {
  type: string
  status: number
  [member: string]: unknown
}

async function problemOf(response: Response): Promise<WireProblem> {
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  return (await response.json()) as WireProblem
}

describe('requests the middleware does not cover run unchanged', () => {
  test('a method not listed (GET) passes the very same request on, even with a key', async () => {
    const { middleware, store } = setup()
    const request = new Request('https://api.example/v1/orders', {
      headers: { 'idempotency-key': 'k' },
    })
    let seen: Request | undefined
    await middleware(request, async (forwarded) => {
      seen = forwarded
      return new Response('ok')
    })
    expect(seen).toBe(request)
    expect(store.calls).toEqual([])
  })

  test('a POST without a key runs as is when the key is optional', async () => {
    const { middleware, handler, store, received } = setup()
    const request = post(null)
    expect((await middleware(request, handler)).status).toBe(201)
    expect(received[0]).toBe(request)
    expect(idempotencyContext(request)).toBeUndefined()
    expect(store.calls).toEqual([])
  })

  test('what throws on the way through is a rejection, never a synchronous throw', async () => {
    const { middleware, handler } = setup({
      required: () => {
        throw new Error('required() failed')
      },
    })
    const answer = middleware(post(null), handler)
    expect(answer).toBeInstanceOf(Promise)
    await expect(answer).rejects.toThrow('required() failed')
    const throwing = () => {
      throw new Error('next failed')
    }
    const passed = middleware(new Request('https://api.example/v1/orders'), throwing)
    await expect(passed).rejects.toThrow('next failed')
    // A `next` that answers a Response itself (not a promise) still gives a promise.
    const sync = (() => new Response('ok')) as unknown as (request: Request) => Promise<Response>
    const direct = middleware(new Request('https://api.example/v1/orders'), sync)
    expect(direct).toBeInstanceOf(Promise)
    expect((await direct).status).toBe(200)
  })

  test('PATCH is covered when listed', async () => {
    const { middleware, store } = setup({ methods: ['post', 'PATCH'] })
    const patch = new Request('https://api.example/v1/orders/1', {
      method: 'PATCH',
      headers: { 'idempotency-key': 'p1' },
      body: '{}',
    })
    // The record is complete by the time the client has read the whole body.
    await (await middleware(patch, async () => new Response('patched'))).text()
    expect(store.calls).toEqual(['claim', 'complete'])
  })
})

describe('bad input is refused with a problem, before any claim', () => {
  test('draft §2.7: a missing key where required → 400 idempotency-key-missing', async () => {
    const { middleware, handler, store, runs } = setup({ required: true })
    const response = await middleware(post(null), handler)
    expect(response.status).toBe(400)
    expect((await problemOf(response)).type).toMatch(/idempotency-key-missing$/)
    expect(runs()).toBe(0)
    expect(store.calls).toEqual([])
  })

  test('`required` can depend on the request', async () => {
    const { middleware, handler } = setup({
      required: (request) => new URL(request.url).pathname.startsWith('/v1/payments'),
    })
    expect((await middleware(post(null), handler)).status).toBe(201)
  })

  test.each([
    ['a 10 KB key', 'k'.repeat(10 * 1024)],
    ['an empty key', ''],
    ['an empty quoted key', '""'],
    ['a key with a control character', 'abc\u0001def'],
    ['a key with DEL', 'abc\u007f'],
    ['a key of 256 characters', 'k'.repeat(256)],
    ['two keys', '"a", "b"'],
  ])('%s → 400 idempotency-key-invalid, nothing run or claimed', async (_, key) => {
    const { middleware, handler, store, runs, events } = setup()
    const response = await middleware(post(key), handler)
    expect(response.status).toBe(400)
    const problem = await problemOf(response)
    expect(problem.type).toMatch(/idempotency-key-invalid$/)
    expect(problem.status).toBe(400)
    expect(runs()).toBe(0)
    expect(store.calls).toEqual([])
    expect(events).toEqual([{ type: 'rejected', code: 'IDEMPOTENCY_KEY_INVALID' }])
  })

  test('a body over maxBodyBytes → 413 payload-too-large with max_bytes', async () => {
    const { middleware, handler, store } = setup({ maxBodyBytes: 16 })
    const response = await middleware(post('k', '{"item":"a very long item name"}'), handler)
    expect(response.status).toBe(413)
    expect(await problemOf(response)).toMatchObject({ max_bytes: 16 })
    expect(store.calls).toEqual([])
  })

  test('a malformed Content-Length → 400 bad-request (RFC 9112 §6.3), nothing claimed', async () => {
    const { middleware, handler, store } = setup()
    const response = await middleware(
      post('k', '{}', { headers: { 'content-length': '2, 2' } }),
      handler,
    )
    expect(response.status).toBe(400)
    expect((await problemOf(response)).type).toMatch(/bad-request$/)
    expect(store.calls).toEqual([])
  })

  test('a body something read before the middleware is a server fault: BODY_ALREADY_READ (500) is thrown, nothing claimed', async () => {
    const { middleware, handler, store, runs } = setup()
    const request = post('k1')
    await request.text()
    const error = await middleware(request, handler).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(BodyReadError)
    expect(error).toMatchObject({ code: 'BODY_ALREADY_READ', status: 500 })
    expect(store.calls).toEqual([])
    expect(runs()).toBe(0)
  })

  test('a client that hangs up mid-body → 400, and the claim is never taken', async () => {
    const { middleware, handler, store, runs } = setup()
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"item":'))
        controller.error(new Error('ECONNRESET'))
      },
    })
    const response = await middleware(
      post('k', '', { body, duplex: 'half' } as RequestInit),
      handler,
    )
    expect(response.status).toBe(400)
    expect((await problemOf(response)).type).toMatch(/bad-request$/)
    expect(runs()).toBe(0)
    expect(store.calls).toEqual([])
  })
})

describe('first execution and replays', () => {
  test('the handler gets the same body bytes and headers after they were read for the fingerprint', async () => {
    const { middleware, handler, received } = setup()
    const body = '{ "qty": 1,\n  "item": "book" }'
    const response = await middleware(
      post('"k1"', body, { headers: { 'x-custom': 'yes' } }),
      handler,
    )
    expect(response.status).toBe(201)
    expect(received[0]?.headers.get('x-custom')).toBe('yes')
    expect(received[0]?.method).toBe('POST')
    expect(await response.json()).toEqual({ id: 'ord_1', item: 'book', qty: 1 })
  })

  test('a streamed request body is read once and reaches the handler whole', async () => {
    const { middleware, handler } = setup()
    const parts = ['{"item":', '"lamp",', '"qty":3}']
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const part = parts.shift()
        if (part === undefined) controller.close()
        else controller.enqueue(new TextEncoder().encode(part))
      },
    })
    const response = await middleware(
      post('k1', '', { body, duplex: 'half' } as RequestInit),
      handler,
    )
    expect(await response.json()).toEqual({ id: 'ord_1', item: 'lamp', qty: 3 })
  })

  test('draft §2.6: a retry gets the stored status, headers and body byte for byte, marked replayed', async () => {
    const { middleware, handler, runs } = setup()
    const first = await middleware(post('k1'), handler)
    const firstBody = new Uint8Array(await first.arrayBuffer())
    const replay = await middleware(post('k1'), handler)
    expect(runs()).toBe(1)
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(first.headers.has('idempotent-replayed')).toBe(false)
    expect(replay.headers.get('location')).toBe('/v1/orders/ord_1')
    expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'))
    expect(new Uint8Array(await replay.arrayBuffer())).toEqual(firstBody)
  })

  test('Set-Cookie and Date reach the first client but are never replayed', async () => {
    const { middleware, handler } = setup()
    const first = await middleware(post('k1'), handler)
    expect(first.headers.get('set-cookie')).toBe('session=secret')
    await first.text()
    const replay = await middleware(post('k1'), handler)
    expect(replay.headers.has('set-cookie')).toBe(false)
    expect(replay.headers.has('date')).toBe(false)
  })

  test('the quoted (draft) and bare (Stripe) forms of one key are one key', async () => {
    const { middleware, handler, runs } = setup()
    await (await middleware(post('"abc-123"'), handler)).text()
    const replay = await middleware(post('abc-123'), handler)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(runs()).toBe(1)
  })

  test('a retry whose body differs only in member order and whitespace is replayed', async () => {
    const { middleware, handler, runs } = setup()
    await (await middleware(post('k1', '{"item":"book","qty":1}'), handler)).text()
    const replay = await middleware(post('k1', '{\n  "qty" : 1 ,\n  "item" : "book"\n}'), handler)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(runs()).toBe(1)
  })

  test('docs/spec.md §4.3 rule 6: the same key with one byte of the body changed → 409 idempotency-key-reused', async () => {
    const { middleware, handler, runs, events } = setup()
    await (await middleware(post('k1', '{"item":"book","qty":1}'), handler)).text()
    const response = await middleware(post('k1', '{"item":"book","qty":2}'), handler)
    expect(response.status).toBe(409)
    const problem = await problemOf(response)
    expect(problem.type).toMatch(/idempotency-key-reused$/)
    expect(problem.status).toBe(409)
    expect(runs()).toBe(1)
    expect(events.map((event) => event.type)).toContain('mismatch')
  })

  test('draft §2.7: the ietf profile answers a reused key with 422', async () => {
    const { middleware, handler } = setup({ profile: 'ietf' })
    await (await middleware(post('k1', '{"qty":1}'), handler)).text()
    const response = await middleware(post('k1', '{"qty":2}'), handler)
    expect(response.status).toBe(422)
    expect((await problemOf(response)).status).toBe(422)
  })

  test('the same key on another route is another request (409), not a replay', async () => {
    const { middleware, handler } = setup()
    await (await middleware(post('k1'), handler)).text()
    const other = new Request('https://api.example/v1/refunds', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
      body: '{"item":"book","qty":1}',
    })
    expect((await middleware(other, handler)).status).toBe(409)
  })

  test('a route template makes formatting differences one route', async () => {
    const { middleware, handler, runs } = setup({
      route: (request) => new URL(request.url).pathname.replace(/\/+$/, '').toLowerCase(),
    })
    await (await middleware(post('k1'), handler)).text()
    const trailing = new Request('https://api.example/V1/Orders/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
      body: '{"item":"book","qty":1}',
    })
    expect((await middleware(trailing, handler)).headers.get('idempotent-replayed')).toBe('true')
    expect(runs()).toBe(1)
  })

  test('a response with no body (204) is stored and replayed without one', async () => {
    const { middleware } = setup()
    await middleware(
      post('k1'),
      async () => new Response(null, { status: 204, headers: { etag: '"v2"' } }),
    )
    const replay = await middleware(post('k1'), async () => new Response('never'))
    expect(replay.status).toBe(204)
    expect(replay.headers.get('etag')).toBe('"v2"')
    expect(replay.body).toBeNull()
  })

  test('a streamed response reaches the client as it comes and is replayed exactly', async () => {
    const { middleware } = setup()
    const parts = ['{"events":[', '1,', '2,', '3', ']}']
    const first = await middleware(post('k1'), async () => {
      const encoder = new TextEncoder()
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          const part = parts.shift()
          if (part === undefined) controller.close()
          else controller.enqueue(encoder.encode(part))
        },
      })
      return new Response(stream, { headers: { 'content-type': 'application/json' } })
    })
    expect(await first.text()).toBe('{"events":[1,2,3]}')
    const replay = await middleware(post('k1'), async () => new Response('never'))
    expect(await replay.text()).toBe('{"events":[1,2,3]}')
  })

  test('different keys are independent', async () => {
    const { middleware, handler, runs } = setup()
    await (await middleware(post('k1'), handler)).text()
    await (await middleware(post('k2'), handler)).text()
    expect(runs()).toBe(2)
  })
})

describe('scopes', () => {
  test('draft §4: one key from two principals executes twice; neither sees the other’s response', async () => {
    const { middleware, handler, runs } = setup({
      scope: async (request) => request.headers.get('x-client-id') ?? 'anonymous',
    })
    const as = (client: string, body: string) =>
      post('shared-key', body, { headers: { 'x-client-id': client } })
    const alice = await (await middleware(as('alice', '{"item":"a"}'), handler)).json()
    const bob = await middleware(as('bob', '{"item":"a"}'), handler)
    expect(bob.headers.has('idempotent-replayed')).toBe(false)
    expect(await bob.json()).not.toEqual(alice)
    expect(runs()).toBe(2)
  })

  test('a scope function that throws (say, 401) makes the middleware throw it; nothing is claimed', async () => {
    const { middleware, handler, store } = setup({
      scope: () => {
        throw new Error('unauthenticated')
      },
    })
    await expect(middleware(post('k1'), handler)).rejects.toThrow('unauthenticated')
    expect(store.calls).toEqual([])
  })
})

describe('the default scope: principal, then client address, else refused', () => {
  const defaults = () => {
    const store = new SpyStore()
    const events: IdempotencyEvent[] = []
    const middleware = idempotency({ store, onEvent: (event) => events.push(event) })
    let runs = 0
    const handler = async () => Response.json({ run: ++runs }, { status: 201 })
    return { store, events, middleware, handler, runs: () => runs }
  }
  const as = (subject: string) => {
    const request = post('shared-key')
    setPrincipal(request, { subject, scopes: [], claims: {} })
    return request
  }
  const from = (address: string) => {
    const request = post('shared-key')
    setClientAddress(request, address)
    return request
  }

  test('draft §5: the principal scopes the key: two principals execute twice, one replays', async () => {
    const { middleware, handler, runs } = defaults()
    expect(await (await middleware(as('alice'), handler)).json()).toEqual({ run: 1 })
    const bob = await middleware(as('bob'), handler)
    expect(bob.headers.has('idempotent-replayed')).toBe(false)
    expect(await bob.json()).toEqual({ run: 2 })
    const again = await middleware(as('alice'), handler)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await again.json()).toEqual({ run: 1 })
    expect(runs()).toBe(2)
  })

  test('the principal is keyed as principalKey writes it: the same scope as a scope option of that text', async () => {
    const store = new MemoryIdempotencyStore()
    const handler = async () => new Response('first', { status: 201 })
    await (await idempotency({ store })(as('alice'), handler)).text()
    const explicit = idempotency({ store, scope: 'sub:alice' })
    const replay = await explicit(post('shared-key'), async () => new Response('second'))
    expect(await replay.text()).toBe('first')
  })

  test('without a principal, the client address scopes the key', async () => {
    const { middleware, handler, runs } = defaults()
    await (await middleware(from('192.0.2.1'), handler)).text()
    expect((await middleware(from('192.0.2.2'), handler)).headers.has('idempotent-replayed')).toBe(
      false,
    )
    expect((await middleware(from('192.0.2.1'), handler)).headers.get('idempotent-replayed')).toBe(
      'true',
    )
    expect(runs()).toBe(2)
    // A principal with neither subject nor client id names no one: the address decides.
    const nameless = from('192.0.2.1')
    setPrincipal(nameless, { scopes: [], claims: {} })
    expect((await middleware(nameless, handler)).headers.get('idempotent-replayed')).toBe('true')
  })

  test('a keyed request with no principal, no address and no scope option MUST NOT share a scope: IDEMPOTENCY_SCOPE_UNKNOWN, a 500, thrown before anything is read or claimed', async () => {
    const { middleware, handler, store, runs, events } = defaults()
    const request = post('k1')
    const error = await middleware(request, handler).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(IdempotencyError)
    expect(error).toMatchObject({ code: 'IDEMPOTENCY_SCOPE_UNKNOWN', status: 500 })
    expect((error as IdempotencyError).message).toMatch(/scope/)
    // The problem says nothing of the configuration.
    const problem = (error as IdempotencyError).toProblem()
    expect(problem).toMatchObject({ status: 500, type: 'internal' })
    expect(JSON.stringify(problem)).not.toMatch(/scope|principal/i)
    expect(events).toEqual([{ type: 'rejected', code: 'IDEMPOTENCY_SCOPE_UNKNOWN' }])
    expect(request.bodyUsed).toBe(false)
    expect(store.calls).toEqual([])
    expect(runs()).toBe(0)
    // Requests without a key need no scope: they pass as before.
    expect((await middleware(post(null), handler)).status).toBe(201)
  })
})

describe('a duplicate in flight', () => {
  function gated() {
    let open: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    let entered: () => void = () => {}
    const started = new Promise<void>((resolve) => {
      entered = resolve
    })
    let runs = 0
    const handler = async () => {
      runs++
      entered()
      await gate
      return new Response(`result ${runs}`, { status: 201 })
    }
    return { handler, open, started, runs: () => runs }
  }

  test('draft §2.7: → 409 idempotency-key-in-flight with Retry-After and retry_after', async () => {
    const { middleware, events } = setup({ leaseMs: 60_000 })
    const first = gated()
    const pending = middleware(post('k1'), first.handler)
    await first.started
    const response = await middleware(post('k1'), first.handler)
    expect(response.status).toBe(409)
    expect(response.headers.get('retry-after')).toBe('1')
    expect(await problemOf(response)).toMatchObject({ retry_after: 1, status: 409 })
    expect(events.some((event) => event.type === 'in-flight')).toBe(true)
    first.open()
    expect(await (await pending).text()).toBe('result 1')
    expect(first.runs()).toBe(1)
  })

  test('Retry-After is at most retryAfterSeconds and at most the lease left, at least 1', async () => {
    const { middleware, clock } = setup({ leaseMs: 10_000, retryAfterSeconds: 5 })
    const first = gated()
    const pending = middleware(post('k1'), first.handler)
    await first.started
    expect((await middleware(post('k1'), first.handler)).headers.get('retry-after')).toBe('5')
    clock.now = T0 + 7_500
    expect((await middleware(post('k1'), first.handler)).headers.get('retry-after')).toBe('3')
    clock.now = T0 + 9_999
    expect((await middleware(post('k1'), first.handler)).headers.get('retry-after')).toBe('1')
    first.open()
    await (await pending).text()
  })

  test('waitForInFlight: a duplicate waits for the first, then gets its response replayed', async () => {
    let release: () => void = () => {}
    const sleeping: number[] = []
    const { middleware, clock } = setup({
      waitForInFlight: { timeoutMs: 1_000, pollMs: 100 },
      sleep: async (ms) => {
        sleeping.push(ms)
        clock.now += ms
        if (sleeping.length === 3) release()
      },
    })
    const first = gated()
    release = first.open
    const pending = middleware(post('k1'), first.handler)
    await first.started
    const waiter = middleware(post('k1'), first.handler)
    const firstResponse = await pending
    expect(await firstResponse.text()).toBe('result 1')
    const replay = await waiter
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(await replay.text()).toBe('result 1')
    expect(first.runs()).toBe(1)
    expect(sleeping.every((ms) => ms === 100)).toBe(true)
  })

  test('waitForInFlight: past timeoutMs the duplicate gets the 409', async () => {
    const { middleware, clock, events } = setup({
      waitForInFlight: { timeoutMs: 1_000, pollMs: 100 },
      sleep: async (ms) => {
        clock.now += ms
      },
    })
    const first = gated()
    const pending = middleware(post('k1'), first.handler)
    await first.started
    const response = await middleware(post('k1'), first.handler)
    expect(response.status).toBe(409)
    expect(clock.now - T0).toBe(1_000)
    expect(events.find((event) => event.type === 'in-flight')).toMatchObject({ waitedMs: 1_000 })
    first.open()
    await (await pending).text()
  })

  test('waitForInFlight: when the first fails and releases the key, the waiter executes', async () => {
    let fail: () => void = () => {}
    const { middleware, clock } = setup({
      waitForInFlight: { timeoutMs: 1_000, pollMs: 100 },
      sleep: async (ms) => {
        clock.now += ms
        fail()
      },
    })
    let entered: () => void = () => {}
    const started = new Promise<void>((resolve) => {
      entered = resolve
    })
    const failing = middleware(post('k1'), async () => {
      entered()
      await new Promise<void>((resolve) => {
        fail = resolve
      })
      return new Response('upstream down', { status: 503 })
    })
    await started
    const waiter = await middleware(
      post('k1'),
      async () => new Response('second try', { status: 201 }),
    )
    expect((await failing).status).toBe(503)
    expect(waiter.status).toBe(201)
    expect(await waiter.text()).toBe('second try')
  })
})

describe('storage policy', () => {
  test.each([500, 502, 503, 409, 429, 401, 403, 412])(
    'a %i is not stored: the claim is released and a retry executes',
    async (status) => {
      const { middleware, events } = setup()
      let runs = 0
      const handler = async () => new Response(`attempt ${++runs}`, { status })
      expect(await (await middleware(post('k1'), handler)).text()).toBe('attempt 1')
      expect(await (await middleware(post('k1'), handler)).text()).toBe('attempt 2')
      expect(events).toContainEqual({
        type: 'released',
        storeKey: expect.any(String),
        reason: 'status',
      })
    },
  )

  test.each([200, 201, 202, 204, 400, 404, 410, 422])(
    'a %i is stored and replayed',
    async (status) => {
      const { middleware } = setup()
      let runs = 0
      const handler = async () =>
        new Response(status === 204 ? null : `attempt ${++runs}`, { status })
      await (await middleware(post('k1'), handler)).text()
      const replay = await middleware(post('k1'), handler)
      expect(replay.status).toBe(status)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      if (status !== 204) expect(await replay.text()).toBe('attempt 1')
    },
  )

  test('storeStatus configures the policy (here: store a 500 too)', async () => {
    const { middleware } = setup({ storeStatus: () => true })
    let runs = 0
    const handler = async () => new Response(`attempt ${++runs}`, { status: 500 })
    await (await middleware(post('k1'), handler)).text()
    expect(await (await middleware(post('k1'), handler)).text()).toBe('attempt 1')
  })

  test('a handler that throws: the claim is released, the error propagates, a retry executes', async () => {
    const { middleware, handler, runs, events } = setup()
    const boom = new Error('database down')
    await expect(
      middleware(post('k1'), async () => {
        throw boom
      }),
    ).rejects.toBe(boom)
    expect(events).toContainEqual({
      type: 'released',
      storeKey: expect.any(String),
      reason: 'thrown',
    })
    expect((await middleware(post('k1'), handler)).status).toBe(201)
    expect(runs()).toBe(1)
  })

  test('a body over maxStoredBytes reaches the client whole, is not stored, and a retry executes', async () => {
    const { middleware, events } = setup({ maxStoredBytes: 1024 })
    let runs = 0
    const big = () => new Response('x'.repeat(5000) + String(++runs))
    const first = await middleware(post('k1'), async () => big())
    expect((await first.text()).length).toBe(5001)
    expect(events).toContainEqual({
      type: 'released',
      storeKey: expect.any(String),
      reason: 'too-large',
    })
    const second = await middleware(post('k1'), async () => big())
    expect(second.headers.has('idempotent-replayed')).toBe(false)
    expect((await second.text()).endsWith('2')).toBe(true)
  })

  test('a Response holding its body whole (wholeBodyOf) is stored without reading its stream, and goes on untouched', async () => {
    const { middleware, events } = setup({ maxStoredBytes: 64 })
    for (const [key, kept, text] of [
      ['k-text', 'créé', 'créé'],
      ['k-bytes', new TextEncoder().encode('bytes'), 'bytes'],
      ['k-null', null, ''],
    ] as const) {
      const held = holdingResponse(kept, { status: 201 })
      expect(await middleware(post(key), async () => held)).toBe(held)
      const replay = await middleware(post(key), async () => new Response('second run'))
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(await replay.text()).toBe(text)
      expect(held.streamRead).toBe(false)
    }
    const large = holdingResponse('x'.repeat(65))
    expect(await middleware(post('k-large'), async () => large)).toBe(large)
    // 33 characters, 66 bytes of UTF-8: over the limit by its bytes, not its length.
    const wide = holdingResponse('é'.repeat(33))
    expect(await middleware(post('k-wide'), async () => wide)).toBe(wide)
    const released = events.filter((event) => event.type === 'released')
    expect(released).toHaveLength(2)
    expect(events).toContainEqual({
      type: 'released',
      storeKey: expect.any(String),
      reason: 'too-large',
    })
  })

  test('a Request holding its body whole (wholeBodyOf) is read from it, not its stream, bounded, and handed on itself', async () => {
    const { middleware } = setup({ maxBodyBytes: 32 })
    const holders: HoldingRequest[] = []
    const holding = (key: string, text: string) => {
      const request = new HoldingRequest(post(key, 'the stream, never read'), text)
      holders.push(request)
      return request
    }
    const seen: string[] = []
    const echo = async (request: Request) => {
      // Still holding its body: the middleware hands the request itself on, no copy.
      expect(holders).toContain(request)
      seen.push(await request.text())
      return new Response('ok', { status: 201 })
    }
    expect((await middleware(holding('k1', '{"a":1,"b":2}'), echo)).status).toBe(201)
    expect(seen).toEqual(['{"a":1,"b":2}'])
    // Fingerprinted from the held bytes: the same body reordered replays, another is refused.
    const replay = await middleware(holding('k1', '{ "b": 2, "a": 1 }'), echo)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect((await middleware(holding('k1', '{"a":2}'), echo)).status).toBe(409)
    expect((await middleware(holding('k2', `"${'x'.repeat(40)}"`), echo)).status).toBe(413)
    expect(seen).toHaveLength(1)
  })

  test('a JSON body parsed for the fingerprint is handed on with the bytes it describes (handOnParsedJson), for readJson to take', async () => {
    const { middleware } = setup()
    const taken: unknown[] = []
    const record = async (request: Request) => {
      taken.push(takeParsedJson(request)?.value)
      return new Response('ok', { status: 201 })
    }
    const holding = (key: string, text: string, type = 'application/json') => {
      const request = new HoldingRequest(post(key, text), text)
      request.headers.set('content-type', type)
      return request
    }
    await middleware(holding('k1', '{"b":[1.0,2],"a":"x"}'), record)
    // Parsed even when the text has no canonical form (1.0): the value is what JSON.parse gives.
    expect(taken[0]).toEqual({ b: [1, 2], a: 'x' })
    // Not JSON, or not a JSON media type: nothing handed on.
    await middleware(holding('k2', '{"a":'), record)
    await middleware(holding('k3', '{"a":1}', 'text/plain'), record)
    expect(taken.slice(1)).toEqual([undefined, undefined])
    // A request that takes its bytes back holds them again: the value goes with it.
    await middleware(new RestoringRequest(post('k4', '{"c":3}')), record)
    expect(taken[3]).toEqual({ c: 3 })
    // A request handed on as a copy (it holds no bytes the hand-off could name) gets none.
    await middleware(post('k5', '{"a":1}'), record)
    expect(taken[4]).toBeUndefined()
  })

  test('a Request that takes its body back (restoreBody) is handed on itself, holding the bytes read', async () => {
    const { middleware } = setup()
    const handed: Request[] = []
    const record = async (request: Request) => {
      handed.push(request)
      return new Response('ok', { status: 201 })
    }
    const first = new RestoringRequest(post('k1', '{ "a": 1 }'))
    expect((await middleware(first, record)).status).toBe(201)
    expect(handed[0]).toBe(first)
    expect(new TextDecoder().decode(first.restored ?? undefined)).toBe('{ "a": 1 }')
    // One that refuses gets a new Request with the same bytes and the same context.
    const tenant = sharedContextKey<string>('idempotency-test.tenant')
    const refusing = new RestoringRequest(post('k2', '{"a":2}'), false)
    setContext(refusing, tenant, 'acme')
    expect((await middleware(refusing, record)).status).toBe(201)
    expect(handed[1]).not.toBe(refusing)
    expect(await handed[1]?.text()).toBe('{"a":2}')
    expect(getContext(handed[1] as Request, tenant)).toBe('acme')
    expect(idempotencyContext(handed[1] as Request)?.key).toBe('k2')
  })

  test('a body stream that fails: the error propagates (a 500 problem at the boundary), the claim is released', async () => {
    const { middleware, handler, events } = setup()
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array([1]))
        controller.error(new Error('upstream reset'))
      },
    })
    await expect(middleware(post('k1'), async () => new Response(broken))).rejects.toThrow(
      'upstream reset',
    )
    expect(events).toContainEqual({
      type: 'released',
      storeKey: expect.any(String),
      reason: 'body-error',
    })
    expect((await middleware(post('k1'), handler)).status).toBe(201)
  })

  test('omitHeaders keeps more fields out of the store', async () => {
    const { middleware } = setup({ omitHeaders: ['X-Trace-Id'] })
    await (
      await middleware(
        post('k1'),
        async () => new Response('ok', { headers: { 'x-trace-id': 't1', 'x-keep': 'k' } }),
      )
    ).text()
    const replay = await middleware(post('k1'), async () => new Response('never'))
    expect(replay.headers.has('x-trace-id')).toBe(false)
    expect(replay.headers.get('x-keep')).toBe('k')
  })
})

describe('a store that fails', () => {
  test('claim fails → 503 service-unavailable, the handler never runs (fail closed)', async () => {
    const { middleware, handler, store, runs, events } = setup()
    store.failing.add('claim')
    const response = await middleware(post('k1'), handler)
    expect(response.status).toBe(503)
    const problem = await problemOf(response)
    expect(problem.type).toMatch(/service-unavailable$/)
    expect(JSON.stringify(problem)).not.toContain('ECONNREFUSED')
    expect(runs()).toBe(0)
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'store-error', operation: 'claim' }),
    )
    // Nothing was half-written: once the store is back, the request executes normally.
    store.failing.clear()
    expect((await middleware(post('k1'), handler)).status).toBe(201)
    expect(runs()).toBe(1)
  })

  test('a store that throws synchronously: claim → 503; complete → the response goes out, unstored', async () => {
    const memory = new MemoryIdempotencyStore()
    const broken = new Set<string>()
    const store: IdempotencyStore = {
      claim: (...args) => {
        if (broken.has('claim')) throw new Error('claim: ECONNREFUSED')
        return memory.claim(...args)
      },
      complete: (...args) => {
        if (broken.has('complete')) throw new Error('complete: ECONNREFUSED')
        return memory.complete(...args)
      },
      release: (...args) => memory.release(...args),
      checkpoint: (...args) => memory.checkpoint(...args),
    }
    const events: IdempotencyEvent[] = []
    const middleware = idempotency({ store, scope: 's', onEvent: (event) => events.push(event) })
    const created = async () => new Response('created', { status: 201 })
    broken.add('claim')
    expect((await middleware(post('k1'), created)).status).toBe(503)
    broken.clear()
    broken.add('complete')
    const response = await middleware(post('k1'), created)
    expect(response.status).toBe(201)
    expect(await response.text()).toBe('created')
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'store-error', operation: 'complete' }),
    )
  })

  test('a store down while waiting for a duplicate → 503', async () => {
    const { middleware, store, clock } = setup({
      waitForInFlight: { timeoutMs: 1_000, pollMs: 100 },
      sleep: async (ms) => {
        clock.now += ms
        store.failing.add('claim')
      },
    })
    let entered: () => void = () => {}
    const started = new Promise<void>((resolve) => {
      entered = resolve
    })
    void middleware(post('k1'), async () => {
      entered()
      return new Promise<Response>(() => {})
    })
    await started
    expect((await middleware(post('k1'), async () => new Response('x'))).status).toBe(503)
  })

  test('complete fails → the client still gets its response; the event says so', async () => {
    const { middleware, handler, store, events } = setup()
    store.failing.add('complete')
    const response = await middleware(post('k1'), handler)
    expect(response.status).toBe(201)
    expect(await response.json()).toMatchObject({ id: 'ord_1' })
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'store-error', operation: 'complete' }),
    )
  })

  test('release fails after a throw → the handler’s error still propagates', async () => {
    const { middleware, store } = setup()
    store.failing.add('release')
    await expect(
      middleware(post('k1'), async () => {
        throw new Error('handler failed')
      }),
    ).rejects.toThrow('handler failed')
  })
})

describe('recovery points (a side effect survives a crash)', () => {
  test('a retry after a failure past a checkpoint resumes there; the side effect runs once', async () => {
    const { middleware, events } = setup()
    const charges: string[] = []
    let failReceipt = true
    const handler = async (request: Request) => {
      const context = idempotencyContext(request)
      expect(context?.key).toBe('pay-1')
      if (context?.recoveryPoint !== 'charged') {
        charges.push('charge')
        await context?.checkpoint('charged')
      }
      if (failReceipt) {
        failReceipt = false
        throw new Error('mail server down')
      }
      return Response.json({ charged: charges.length }, { status: 201 })
    }
    await expect(middleware(post('pay-1'), handler)).rejects.toThrow('mail server down')
    const retry = await middleware(post('pay-1'), handler)
    expect(retry.status).toBe(201)
    expect(await retry.json()).toEqual({ charged: 1 })
    expect(charges).toEqual(['charge'])
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'executed', recoveryPoint: 'charged' }),
    )
  })

  test('after a checkpoint the key stays bound to its request: another body → 409', async () => {
    const { middleware } = setup()
    await expect(
      middleware(post('pay-1', '{"amount":1}'), async (request) => {
        await idempotencyContext(request)?.checkpoint('charged')
        throw new Error('crash')
      }),
    ).rejects.toThrow('crash')
    expect(
      (await middleware(post('pay-1', '{"amount":2}'), async () => new Response('x'))).status,
    ).toBe(409)
  })

  test('a checkpoint after the lease was taken over fails with IDEMPOTENCY_LEASE_LOST (409)', async () => {
    const { middleware, clock } = setup({ leaseMs: 1_000 })
    let entered: () => void = () => {}
    const started = new Promise<void>((resolve) => {
      entered = resolve
    })
    let resume: () => void = () => {}
    const slow = middleware(post('k1'), async (request) => {
      entered()
      await new Promise<void>((resolve) => {
        resume = resolve
      })
      await idempotencyContext(request)?.checkpoint('late')
      return new Response('slow')
    })
    await started
    clock.now = T0 + 1_000
    await (await middleware(post('k1'), async () => new Response('fast', { status: 201 }))).text()
    resume()
    const error = await slow.catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(IdempotencyError)
    expect((error as IdempotencyError).code).toBe('IDEMPOTENCY_LEASE_LOST')
    expect((error as IdempotencyError).status).toBe(409)
  })

  test('a checkpoint with the store down fails with STORE_UNAVAILABLE (503)', async () => {
    const { middleware, store } = setup()
    store.failing.add('checkpoint')
    const error = await middleware(post('k1'), async (request) => {
      await idempotencyContext(request)?.checkpoint('x')
      return new Response('never')
    }).catch((caught: unknown) => caught)
    expect((error as IdempotencyError).code).toBe('STORE_UNAVAILABLE')
  })
})

describe('events and options', () => {
  test('the events of an execution, then a replay', async () => {
    const { middleware, handler, events } = setup()
    await (await middleware(post('k1'), handler)).text()
    await middleware(post('k1'), handler)
    expect(events.map((event) => event.type)).toEqual(['executed', 'stored', 'replayed'])
    const stored = events[1] as Extract<IdempotencyEvent, { type: 'stored' }>
    expect(stored).toMatchObject({ status: 201, storeKey: expect.stringMatching(/^[\w-]{43}$/) })
  })

  test('an observer that throws does not change the answer', async () => {
    const { middleware, handler } = setup({
      onEvent: () => {
        throw new Error('observer bug')
      },
    })
    expect((await middleware(post('k1'), handler)).status).toBe(201)
  })

  test('problemBase resolves problem types', async () => {
    const { middleware, handler } = setup({ problemBase: 'https://api.example/problems/' })
    const problem = await problemOf(await middleware(post(''), handler))
    expect(problem.type).toBe('https://api.example/problems/idempotency-key-invalid')
  })

  test.each([
    ['leaseMs', { leaseMs: 0 }],
    ['retentionMs', { retentionMs: -1 }],
    ['maxBodyBytes', { maxBodyBytes: 1.5 }],
    ['maxStoredBytes', { maxStoredBytes: Number.NaN }],
    ['retryAfterSeconds', { retryAfterSeconds: 0 }],
    ['waitForInFlight.pollMs', { waitForInFlight: { timeoutMs: 10, pollMs: 0 } }],
  ])('a bad %s is a RangeError at setup', (_, options) => {
    expect(() =>
      idempotency({ store: new MemoryIdempotencyStore(), scope: 's', ...options }),
    ).toThrow(RangeError)
  })

  test('a store is required; a scope, when given, is a string or a function', () => {
    expect(() => idempotency({ scope: 's' } as IdempotencyOptions)).toThrow(TypeError)
    expect(() =>
      idempotency({
        store: new MemoryIdempotencyStore(),
        scope: 42,
      } as unknown as IdempotencyOptions),
    ).toThrow(TypeError)
    expect(() => idempotency({ store: new MemoryIdempotencyStore() })).not.toThrow()
  })
})
