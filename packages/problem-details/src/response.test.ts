import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { problems } from './catalog.ts'
import { ProblemError } from './error.ts'
import { defineProblem } from './problem.ts'
import { errorToProblemResponse, serializeProblem, toProblemResponse } from './response.ts'

const request = (path: string, headers: HeadersInit = {}) =>
  new Request(`https://api.example.com${path}`, { headers })

describe('toProblemResponse', () => {
  test('MUST: the body status equals the HTTP status, media type application/problem+json', async () => {
    const response = toProblemResponse(problems.notFound.create({ detail: 'No order 42' }), {
      request: request('/v1/orders/42'),
      base: 'https://api.example.com/problems/',
    })
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toEqual({
      type: 'https://api.example.com/problems/not-found',
      title: 'The resource was not found.',
      status: 404,
      detail: 'No order 42',
      instance: '/v1/orders/42',
    })
  })

  test('instance is the path without the query string', async () => {
    const response = toProblemResponse(problems.badRequest.create(), {
      request: request('/v1/orders?secret=1'),
    })
    expect((await response.json()).instance).toBe('/v1/orders')
  })

  test('a path over 2048 characters is not echoed back (a 414 must not repeat the URI it refused)', async () => {
    const at = (length: number) =>
      toProblemResponse(problems.uriTooLong.create(), {
        request: new Request(`https://api.example/${'a'.repeat(length - 1)}`),
      }).json()
    expect((await at(2048)).instance).toHaveLength(2048)
    expect(await at(2049)).not.toHaveProperty('instance')
  })

  test('instance can come from the request id instead', async () => {
    const response = toProblemResponse(problems.badRequest.create(), {
      request: request('/v1/orders'),
      instanceFrom: 'request-id',
      requestId: 'abc 1',
    })
    expect((await response.json()).instance).toBe('urn:request-id:abc%201')
  })

  test('an explicit instance is kept', async () => {
    const response = toProblemResponse(problems.badRequest.create({ instance: '/x' }), {
      request: request('/v1/orders'),
    })
    expect((await response.json()).instance).toBe('/x')
  })

  test('the title follows Accept-Language, with Content-Language and Vary', async () => {
    const response = toProblemResponse(problems.notFound.create(), {
      request: request('/x', { 'accept-language': 'de-CH, en;q=0.5' }),
      headers: { vary: 'Origin' },
    })
    expect(response.headers.get('content-language')).toBe('de')
    expect(response.headers.get('vary')).toBe('Origin, Accept-Language')
    expect((await response.json()).title).toBe('Die Ressource wurde nicht gefunden.')
  })

  test('an unknown language falls back to the default title', async () => {
    const response = toProblemResponse(problems.notFound.create(), {
      request: request('/x', { 'accept-language': 'ja' }),
    })
    expect(response.headers.get('content-language')).toBe('en')
    expect((await response.json()).title).toBe('The resource was not found.')
  })

  test('a type without translations sets no Content-Language', () => {
    const plain = defineProblem({ type: 'plain', title: 'Plain.', status: 400 })
    const response = toProblemResponse(plain.create(), { request: request('/x') })
    expect(response.headers.get('content-language')).toBeNull()
    expect(response.headers.get('vary')).toBeNull()
  })

  test('extra headers are kept (Allow on a 405)', () => {
    const response = toProblemResponse(
      problems.methodNotAllowed.create({ allowed_methods: ['GET', 'HEAD'] }),
      { headers: { allow: 'GET, HEAD' } },
    )
    expect(response.headers.get('allow')).toBe('GET, HEAD')
  })

  test('the IANA quota-exceeded type keeps its registered URI', () => {
    const { body } = serializeProblem(
      problems.quotaExceeded.create({ 'violated-policies': ['day'] }),
    )
    expect(body.type).toBe('https://iana.org/assignments/http-problem-types#quota-exceeded')
    expect(body['violated-policies']).toEqual(['day'])
  })

  test('translated titles never reach the wire as a member', () => {
    const problem = problems.notFound.create()
    expect(JSON.stringify(problem)).not.toContain('Ressource')
    expect(Object.keys({ ...problem })).toEqual(['type', 'title', 'status'])
  })

  test('no Accept-Language value makes serialisation throw', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2000 }), (value) => {
        const headers = new Headers()
        try {
          headers.set('accept-language', value)
        } catch {
          return // not a valid header value: Headers refuses it before we see it
        }
        const { body } = serializeProblem(problems.notFound.create(), {
          request: new Request('https://x.test/', { headers }),
        })
        expect(typeof body.title).toBe('string')
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

describe('errorToProblemResponse', () => {
  test('a ProblemError answers its own problem', async () => {
    const response = errorToProblemResponse(problems.conflict.error({ detail: 'busy' }))
    expect(response.status).toBe(409)
    expect((await response.json()).detail).toBe('busy')
  })

  test('anything else answers 500 without leaking the message', async () => {
    const response = errorToProblemResponse(new Error('password=hunter2 at db.ts:12'))
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(text).not.toContain('hunter2')
    expect(JSON.parse(text).title).toBe('An unexpected error occurred.')
  })

  test('thrown non-errors (strings, null) answer 500 too', () => {
    expect(errorToProblemResponse('boom').status).toBe(500)
    expect(errorToProblemResponse(null).status).toBe(500)
  })

  test('any object with toProblem() is honoured (errors of other packages)', () => {
    const foreign = { toProblem: () => problems.preconditionFailed.create() }
    expect(errorToProblemResponse(foreign).status).toBe(412)
  })

  test('a thrown catalog problem keeps its translated titles', async () => {
    const response = errorToProblemResponse(problems.notFound.error(), {
      request: new Request('https://x.test/a', { headers: { 'accept-language': 'fr' } }),
    })
    expect(response.headers.get('content-language')).toBe('fr')
    expect((await response.json()).title).toBe("La ressource n'existe pas.")
  })

  test('ProblemError works with a hand-made problem', () => {
    const error = new ProblemError({ type: 'about:blank', title: 'Gone', status: 410 })
    expect(errorToProblemResponse(error).status).toBe(410)
  })
})
