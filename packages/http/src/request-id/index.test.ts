import { ProblemError, problems } from '@api-blocks/problem-details'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { compose } from '../compose.ts'
import { isValidRequestId, MAX_REQUEST_ID_LENGTH, requestId, requestIdOf } from './index.ts'

const counter = () => {
  let n = 0
  return () => `gen-${++n}`
}

const echo = async (request: Request) => Response.json({ id: requestIdOf(request) })

describe('isValidRequestId', () => {
  test.each([
    ['0f5e1c4a-8d0b-4a5e-9c55-6c1d1f0b8a11', true],
    ['host:1234:abc.def_9', true],
    ['a'.repeat(MAX_REQUEST_ID_LENGTH), true],
    ['a'.repeat(MAX_REQUEST_ID_LENGTH + 1), false],
    ['', false],
    ['a b', false],
    ['a/b', false],
    ['<script>', false],
    ['é', false],
  ])('%j → %s', (value, valid) => {
    expect(isValidRequestId(value)).toBe(valid)
  })
})

describe('requestId middleware', () => {
  test('generates an id when there is none, with the injected generator', async () => {
    const app = compose(requestId({ generate: counter() }))(echo)
    const response = await app(new Request('https://api.example/'))
    expect(response.headers.get('x-request-id')).toBe('gen-1')
    expect(await response.json()).toEqual({ id: 'gen-1' })
  })

  test('keeps a well-formed inbound id and echoes it', async () => {
    const app = compose(requestId({ generate: counter() }))(echo)
    const response = await app(
      new Request('https://api.example/', { headers: { 'x-request-id': 'abc-123' } }),
    )
    expect(response.headers.get('x-request-id')).toBe('abc-123')
  })

  test('a 10 KB X-Request-Id is replaced, never echoed', async () => {
    const huge = 'a'.repeat(10 * 1024)
    const app = compose(requestId({ generate: counter() }))(echo)
    const response = await app(
      new Request('https://api.example/', { headers: { 'x-request-id': huge } }),
    )
    expect(response.headers.get('x-request-id')).toBe('gen-1')
    expect(await response.text()).not.toContain(huge)
  })

  test('a malformed inbound id is replaced', async () => {
    const app = compose(requestId({ generate: counter() }))(echo)
    const response = await app(
      new Request('https://api.example/', { headers: { 'x-request-id': 'id with spaces' } }),
    )
    expect(response.headers.get('x-request-id')).toBe('gen-1')
  })

  test('trustInbound: false always generates', async () => {
    const app = compose(requestId({ generate: counter(), trustInbound: false }))(echo)
    const response = await app(
      new Request('https://api.example/', { headers: { 'x-request-id': 'abc' } }),
    )
    expect(response.headers.get('x-request-id')).toBe('gen-1')
  })

  test('a trust predicate that throws is treated as "do not trust"', async () => {
    const app = compose(
      requestId({
        generate: counter(),
        trustInbound: () => {
          throw new Error('boom')
        },
      }),
    )(echo)
    const response = await app(
      new Request('https://api.example/', { headers: { 'x-request-id': 'abc' } }),
    )
    expect(response.headers.get('x-request-id')).toBe('gen-1')
  })

  test('the default generator makes UUIDs', async () => {
    const app = compose(requestId())(echo)
    const id = (await app(new Request('https://api.example/'))).headers.get('x-request-id')
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  test('a thrown ProblemError answers its problem, with the id', async () => {
    const app = compose(requestId({ generate: counter() }))(async () => {
      throw problems.notFound.error({ detail: 'No order 42' })
    })
    const response = await app(new Request('https://api.example/v1/orders/42'))
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(response.headers.get('x-request-id')).toBe('gen-1')
    expect(await response.json()).toMatchObject({ status: 404, instance: '/v1/orders/42' })
  })

  test('any other error answers 500 internal without its message, and reaches onError', async () => {
    const seen: unknown[] = []
    const app = compose(requestId({ generate: counter(), onError: (error) => seen.push(error) }))(
      async () => {
        throw new Error('secret database password')
      },
    )
    const response = await app(new Request('https://api.example/'))
    expect(response.status).toBe(500)
    expect(response.headers.get('x-request-id')).toBe('gen-1')
    expect(await response.text()).not.toContain('secret')
    expect(seen).toHaveLength(1)
  })

  test('a throwing onError hook does not break the answer', async () => {
    const app = compose(
      requestId({
        onError: () => {
          throw new Error('logger down')
        },
      }),
    )(async () => {
      throw new ProblemError({ type: 'about:blank', title: 'Teapot', status: 418 })
    })
    expect((await app(new Request('https://api.example/'))).status).toBe(418)
  })

  test('problem options: instance from the request id', async () => {
    const app = compose(
      requestId({ generate: () => 'r:1', problem: { instanceFrom: 'request-id' } }),
    )(async () => {
      throw problems.conflict.error()
    })
    const body = await (await app(new Request('https://api.example/x'))).json()
    expect(body.instance).toBe('urn:request-id:r%3A1')
  })

  test('immutable responses (a redirect) still get the id', async () => {
    const app = compose(requestId({ generate: counter() }))(async () =>
      Response.redirect('https://api.example/elsewhere', 307),
    )
    const response = await app(new Request('https://api.example/'))
    expect(response.status).toBe(307)
    expect(response.headers.get('x-request-id')).toBe('gen-1')
  })

  test('a custom header name', async () => {
    const app = compose(requestId({ header: 'Request-Id', generate: counter() }))(echo)
    const response = await app(
      new Request('https://api.example/', { headers: { 'request-id': 'abc' } }),
    )
    expect(response.headers.get('request-id')).toBe('abc')
  })

  test('property: the echoed id is the inbound one only when it is valid', async () => {
    const headerValue = fc
      .string({
        unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
        maxLength: 300,
      })
      .filter((s) => s.trim() === s)
    await fc.assert(
      fc.asyncProperty(headerValue, async (value) => {
        const app = compose(requestId({ generate: () => 'generated' }))(echo)
        const headers = value === '' ? {} : { 'x-request-id': value }
        const response = await app(new Request('https://api.example/', { headers }))
        const id = response.headers.get('x-request-id')
        expect(id).toBe(isValidRequestId(value) ? value : 'generated')
      }),
      { interruptAfterTimeLimit: 1500 },
    )
  })
})
