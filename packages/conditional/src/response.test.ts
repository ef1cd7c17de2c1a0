import { ApiBlocksError } from '@api-blocks/core'
import { errorToProblemResponse, ProblemError, problems } from '@api-blocks/problem-details'
import { describe, expect, test } from 'vitest'
import { PreconditionError } from './error.ts'
import { evaluatePreconditions } from './evaluate.ts'
// notModifiedResponse is core's, re-exported here: tested through this package's public API.
import { notModifiedResponse } from './index.ts'
import { checkPreconditions, toPreconditionResponse } from './response.ts'

const headersOf200 = {
  'content-location': '/v1/orders/7',
  date: 'Thu, 01 Jan 2026 12:00:05 GMT',
  etag: '"v2"',
  vary: 'Accept, Accept-Language',
  'cache-control': 'no-cache',
  expires: 'Thu, 01 Jan 2026 13:00:00 GMT',
  'last-modified': 'Thu, 01 Jan 2026 12:00:00 GMT',
  'content-type': 'application/json',
  'content-length': '42',
  'content-encoding': 'gzip',
  'content-language': 'en',
  'x-request-id': 'req-1',
}

describe('notModifiedResponse (RFC 9110 §15.4.5)', () => {
  const response = notModifiedResponse(headersOf200)

  test('is a 304 without content', async () => {
    expect(response.status).toBe(304)
    expect(response.body).toBeNull()
    expect(await response.text()).toBe('')
  })

  test.each(['content-location', 'date', 'etag', 'vary', 'cache-control', 'expires'])(
    'MUST carry %s as the 200 would have',
    (name) => {
      expect(response.headers.get(name)).toBe(headersOf200[name as keyof typeof headersOf200])
    },
  )

  test.each(['content-type', 'content-length', 'content-encoding', 'content-language'])(
    'drops the content field %s',
    (name) => {
      expect(response.headers.has(name)).toBe(false)
    },
  )

  test('SHOULD NOT send Last-Modified when there is an ETag', () => {
    expect(response.headers.has('last-modified')).toBe(false)
  })

  test('keeps Last-Modified when there is no ETag, to guide cache updates', () => {
    const { etag: _, ...withoutTag } = headersOf200
    expect(notModifiedResponse(withoutTag).headers.get('last-modified')).toBe(
      headersOf200['last-modified'],
    )
  })

  test('keeps fields that are not about the representation', () => {
    expect(response.headers.get('x-request-id')).toBe('req-1')
  })
})

describe('toPreconditionResponse', () => {
  const request = new Request('https://api.example/v1/orders/7', {
    method: 'PUT',
    headers: { 'if-match': '"v1"' },
  })

  test('412 answers the precondition-failed problem with the reason', async () => {
    const result = evaluatePreconditions('PUT', request.headers, { etag: '"v2"' })
    if (result.outcome === 'proceed') throw new Error('expected a failure')
    const response = toPreconditionResponse(result, {
      request,
      headers: headersOf200,
      problemHeaders: { 'x-request-id': 'req-1' },
    })
    expect(response.status).toBe(412)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(response.headers.get('x-request-id')).toBe('req-1')
    // The 2xx fields describe the representation, not the failure.
    expect(response.headers.has('etag')).toBe(false)
    expect(response.headers.has('cache-control')).toBe(false)
    const body = await response.json()
    expect(problems.preconditionFailed.is(body)).toBe(true)
    expect(body).toMatchObject({
      status: 412,
      instance: '/v1/orders/7',
      detail: 'If-Match does not match the current entity tag of the resource.',
    })
  })

  test('428 answers the precondition-required problem', async () => {
    const result = evaluatePreconditions('PUT', {}, { etag: '"v2"' }, { requireIfMatch: true })
    if (result.outcome === 'proceed') throw new Error('expected a failure')
    const response = toPreconditionResponse(result, { request })
    expect(response.status).toBe(428)
    expect(problems.preconditionRequired.is(await response.json())).toBe(true)
  })

  test('304 uses the 2xx fields', () => {
    const response = toPreconditionResponse(
      { outcome: 'not-modified', field: 'If-None-Match' },
      { headers: headersOf200 },
    )
    expect(response.status).toBe(304)
    expect(response.headers.get('etag')).toBe('"v2"')
  })
})

describe('checkPreconditions (Fetch layer)', () => {
  const validators = { etag: '"v2"', lastModified: Date.UTC(2026, 0, 1, 12) }
  const get = (headers: Record<string, string>) =>
    new Request('https://api.example/v1/orders/7', { headers })

  test('undefined when the handler should go on', () => {
    expect(checkPreconditions(get({ 'if-none-match': '"v1"' }), validators)).toBeUndefined()
  })

  test('a 304 carries the ETag from the validators plus the given fields', () => {
    const response = checkPreconditions(get({ 'if-none-match': '"v2"' }), validators, {
      headers: { 'cache-control': 'no-cache', vary: 'Accept' },
    })
    expect(response?.status).toBe(304)
    expect(response?.headers.get('etag')).toBe('"v2"')
    expect(response?.headers.get('cache-control')).toBe('no-cache')
    expect(response?.headers.get('vary')).toBe('Accept')
  })

  test('a 304 from If-Modified-Since on an untagged resource carries Last-Modified', () => {
    const response = checkPreconditions(
      get({ 'if-modified-since': 'Thu, 01 Jan 2026 12:00:00 GMT' }),
      { lastModified: validators.lastModified },
    )
    expect(response?.status).toBe(304)
    expect(response?.headers.get('last-modified')).toBe('Thu, 01 Jan 2026 12:00:00 GMT')
  })

  test('412 and 428 with the request path as instance', async () => {
    const put = (headers: Record<string, string>) =>
      new Request('https://api.example/v1/orders/7', { method: 'PUT', headers })
    const failed = checkPreconditions(put({ 'if-match': '"v1"' }), validators)
    expect(failed?.status).toBe(412)
    expect(await failed?.json()).toMatchObject({ instance: '/v1/orders/7' })
    const required = checkPreconditions(put({}), validators, { requireIfMatch: true })
    expect(required?.status).toBe(428)
    // RFC 9110 §13.1.1: If-Match uses the strong comparison, a weak tag never matches.
    const weakened = put({ 'if-match': 'W/"v2"' })
    expect(checkPreconditions(weakened, validators)?.status).toBe(412)
  })
})

describe('PreconditionError', () => {
  test('is a ProblemError that answers 412 or 428 from the catalog', async () => {
    const failed = evaluatePreconditions('DELETE', { 'if-match': '"v1"' }, { etag: '"v2"' })
    if (failed.outcome !== 'precondition-failed') throw new Error('expected a failure')
    const error = new PreconditionError(failed)
    expect(error).toBeInstanceOf(ProblemError)
    expect(error.code).toBe('PRECONDITION_FAILED')
    expect(error.status).toBe(412)
    expect(error.result).toBe(failed)
    expect(error.toProblem().detail).toBe(failed.detail)
    const response = errorToProblemResponse(error)
    expect(response.status).toBe(412)

    const required = evaluatePreconditions('PUT', {}, {}, { requireIfMatch: true })
    if (required.outcome !== 'precondition-required') throw new Error('expected 428')
    expect(new PreconditionError(required).code).toBe('PRECONDITION_REQUIRED')
    expect(new PreconditionError(required).status).toBe(428)
  })

  test('the codes are those of its problem types, and the cause is kept', () => {
    const required = evaluatePreconditions('PUT', {}, {}, { requireIfMatch: true })
    if (required.outcome !== 'precondition-required') throw new Error('expected 428')
    expect(new PreconditionError(required).code).toBe('PRECONDITION_REQUIRED')
    const cause = new Error('version conflict in the store')
    expect(new PreconditionError(required, { cause }).cause).toBe(cause)
  })

  test('is an ApiBlocksError, recognised across duplicate installs by its kind', () => {
    const required = evaluatePreconditions('PUT', {}, {}, { requireIfMatch: true })
    if (required.outcome !== 'precondition-required') throw new Error('expected 428')
    const error = new PreconditionError(required)
    expect(error).toBeInstanceOf(ApiBlocksError)
    expect(error.name).toBe('PreconditionError')
    expect(PreconditionError.kind).toBe('conditional.PreconditionError')
    // A PreconditionError of another copy of the package: another class, the same kind.
    class OtherCopy extends ApiBlocksError {
      static override readonly kind: string = 'conditional.PreconditionError'
    }
    expect(new OtherCopy('PRECONDITION_FAILED', 'x', { status: 412 })).toBeInstanceOf(
      PreconditionError,
    )
    expect(new ApiBlocksError('PRECONDITION_FAILED', 'x', { status: 412 })).not.toBeInstanceOf(
      PreconditionError,
    )
  })
})
