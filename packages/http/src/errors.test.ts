import type { Middleware } from '@api-blocks/core'
import { problems } from '@api-blocks/problem-details'
import { describe, expect, test } from 'vitest'
import { compose } from './compose.ts'
import { errorBoundary } from './errors.ts'
import { requestId } from './request-id/index.ts'

// A layer that decorates every response it sees, as a rate limiter does.
const decorate: Middleware = async (request, next) => {
  const response = await next(request)
  response.headers.set('x-decorated', 'yes')
  return response
}

describe('errorBoundary()', () => {
  test('a thrown problem becomes a Response that the layers above can decorate', async () => {
    const errors: unknown[] = []
    const app = compose(
      requestId({ generate: () => 'id-1', onError: (error) => errors.push(error) }),
      decorate,
      errorBoundary(),
    )(async () => {
      throw problems.validation.error({ errors: [{ detail: 'bad', pointer: '/a' }] })
    })
    const response = await app(new Request('https://api.example/v1/things', { method: 'POST' }))
    expect(response.status).toBe(422)
    expect(response.headers.get('x-decorated')).toBe('yes')
    expect(response.headers.get('x-request-id')).toBe('id-1')
    // Changed on purpose (issue 13): a thrown 4xx used to reach onError, so a service that logs
    // what onError gets wrote a client's mistake as an unexpected error, stack and all.
    expect(errors).toEqual([])
  })

  test('onError hears of the 5xx answers only, from whichever layer caught the error', async () => {
    const errors: unknown[] = []
    const failure = new Error('store down')
    const app = compose(
      requestId({ onError: (error) => errors.push(error) }),
      errorBoundary(),
    )(async (request) => {
      if (request.method === 'POST') throw failure
      throw problems.notFound.error()
    })
    expect((await app(new Request('https://api.example/'))).status).toBe(404)
    expect((await app(new Request('https://api.example/', { method: 'POST' }))).status).toBe(500)
    expect(errors).toEqual([failure])
  })

  test('anything else becomes the 500 problem, without its message', async () => {
    const app = compose(
      decorate,
      errorBoundary(),
    )(async () => {
      throw new Error('secret detail')
    })
    const response = await app(new Request('https://api.example/'))
    expect(response.status).toBe(500)
    expect(response.headers.get('x-decorated')).toBe('yes')
    expect(await response.text()).not.toContain('secret detail')
  })
})

describe('errorResponse(): an error with header fields of its own', () => {
  test('a ContentEncodingError thrown below the boundary answers 415 with Accept-Encoding', async () => {
    const { ContentEncodingError } = await import('./body/encoding.ts')
    const app = compose(errorBoundary())(async () => {
      throw new ContentEncodingError('gzip', ['identity'])
    })
    const response = await app(new Request('https://api.example/', { method: 'POST' }))
    expect(response.status).toBe(415)
    expect(response.headers.get('accept-encoding')).toBe('identity')
    // RFC 9110 §12.5.3: a 415 for the media type MUST NOT carry Accept-Encoding.
    const media = compose(errorBoundary())(async () => {
      throw problems.unsupportedMediaType.error({ accepted: ['application/json'] })
    })
    const other = await media(new Request('https://api.example/', { method: 'POST' }))
    expect(other.status).toBe(415)
    expect(other.headers.get('accept-encoding')).toBeNull()
  })
})
