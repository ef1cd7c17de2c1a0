// Interplay with conditional requests. RFC 9110 §13.1.1: when If-Match evaluates to false,
// the origin server MUST NOT perform the method; it MAY answer 412, or, "if the request is a
// state-changing operation that appears to have already been applied to the selected
// representation", a 2xx. A retried write whose first attempt succeeded is exactly that case:
// its If-Match names the version it replaced. With the idempotency middleware placed before
// precondition evaluation, the retry gets the stored result and never reaches the check.
import { describe, expect, test } from 'vitest'
import { MemoryIdempotencyStore } from './memory-store.ts'
import { idempotency } from './middleware.ts'

type Handler = (request: Request) => Promise<Response>

/** A one-resource service: PATCH and PUT are conditional on If-Match of its version. */
function resource() {
  const state = { version: 1, name: 'draft', writes: 0 }
  const etag = () => `"v${state.version}"`
  // The precondition step alone (RFC 9110 §13.2.2 step 1), as a middleware.
  const preconditions = async (request: Request, next: Handler) => {
    if (request.headers.get('if-match') !== etag()) {
      return new Response(null, { status: 412, headers: { etag: etag() } })
    }
    return next(request)
  }
  const write: Handler = async (request) => {
    const patch = (await request.json()) as { name: string }
    state.name = patch.name
    state.version++
    state.writes++
    return Response.json({ name: state.name }, { headers: { etag: etag() } })
  }
  return { state, preconditions, write }
}

function request(method: string, ifMatch: string, key: string | null, body = '{"name":"final"}') {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'if-match': ifMatch,
  }
  if (key !== null) headers['idempotency-key'] = key
  return new Request('https://api.example/v1/documents/1', { method, headers, body })
}

describe('idempotency before preconditions (RFC 9110 §13.1.1)', () => {
  const setup = () => {
    const service = resource()
    const withIdempotency = idempotency({
      store: new MemoryIdempotencyStore(),
      scope: 'user-1',
      methods: ['PATCH', 'PUT'],
      // If-Match is part of the request: a retry with another validator is another request.
      fingerprintHeaders: ['if-match'],
    })
    const chain: Handler = (req) =>
      withIdempotency(req, (inner) => service.preconditions(inner, service.write))
    return { service, chain }
  }

  test.each(['PATCH', 'PUT'])(
    'a replayed %s whose If-Match no longer matches returns the stored result, not 412',
    async (method) => {
      const { service, chain } = setup()
      const first = await chain(request(method, '"v1"', 'k1'))
      expect(first.status).toBe(200)
      expect(first.headers.get('etag')).toBe('"v2"')
      const firstBody = await first.text()

      // The client lost the answer and retries: If-Match "v1" no longer matches (now "v2").
      const retry = await chain(request(method, '"v1"', 'k1'))
      expect(retry.status).toBe(200)
      expect(retry.headers.get('idempotent-replayed')).toBe('true')
      expect(retry.headers.get('etag')).toBe('"v2"')
      expect(await retry.text()).toBe(firstBody)
      expect(service.state.writes).toBe(1)
    },
  )

  test('without a key the same retry is evaluated and MUST NOT be performed: 412', async () => {
    const { service, chain } = setup()
    await (await chain(request('PATCH', '"v1"', 'k1'))).text()
    const retry = await chain(request('PATCH', '"v1"', null))
    expect(retry.status).toBe(412)
    expect(service.state.writes).toBe(1)
  })

  test('the same key with another If-Match is another request: 409, not a replay', async () => {
    const { service, chain } = setup()
    await (await chain(request('PATCH', '"v1"', 'k1'))).text()
    expect((await chain(request('PATCH', '"v2"', 'k1'))).status).toBe(409)
    expect(service.state.writes).toBe(1)
  })

  test('a 412 is not stored: once the client has the right validator, a new key executes', async () => {
    const { service, chain } = setup()
    const stale = await chain(request('PATCH', '"v0"', 'k0'))
    expect(stale.status).toBe(412)
    const fresh = await chain(request('PATCH', '"v1"', 'k2'))
    expect(fresh.status).toBe(200)
    expect(service.state.writes).toBe(1)
  })
})

describe('the other order, for contrast', () => {
  test('preconditions evaluated before the idempotency middleware turn the retry into a 412', async () => {
    const service = resource()
    const withIdempotency = idempotency({
      store: new MemoryIdempotencyStore(),
      scope: 'user-1',
      methods: ['PATCH'],
    })
    const wrongOrder: Handler = (req) =>
      service.preconditions(req, (inner) => withIdempotency(inner, service.write))
    await (await wrongOrder(request('PATCH', '"v1"', 'k1'))).text()
    expect((await wrongOrder(request('PATCH', '"v1"', 'k1'))).status).toBe(412)
  })
})
