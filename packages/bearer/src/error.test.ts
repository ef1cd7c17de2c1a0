import { ApiBlocksError } from '@api-blocks/core'
import { ProblemError } from '@api-blocks/problem-details'
import { describe, expect, it } from 'vitest'
import type { BearerErrorCode } from './error.ts'
import { BearerError } from './error.ts'

const table: [BearerErrorCode, number, string, string | undefined][] = [
  ['TOKEN_MISSING', 401, 'unauthorized', undefined],
  ['TOKEN_MALFORMED', 400, 'bad-request', 'invalid_request'],
  ['TOKEN_IN_QUERY', 400, 'bad-request', 'invalid_request'],
  ['TOKEN_INVALID', 401, 'unauthorized', 'invalid_token'],
  ['TOKEN_EXPIRED', 401, 'unauthorized', 'invalid_token'],
  ['INSUFFICIENT_SCOPE', 403, 'insufficient-scope', 'insufficient_scope'],
  ['INTROSPECTION_UNAVAILABLE', 503, 'service-unavailable', undefined],
  ['JWKS_UNAVAILABLE', 503, 'service-unavailable', undefined],
]

describe('BearerError', () => {
  it.each(table)('%s answers %i %s, challenge error %s', (code, status, type, challenge) => {
    const error = new BearerError(code, 'What happened.', { requiredScopes: ['a:b'] })
    expect(error.code).toBe(code)
    expect(error.status).toBe(status)
    expect(error.toProblem()).toMatchObject({ type, status })
    expect(error.challengeError).toBe(challenge)
    expect(error.message).toBe('What happened.')
  })

  it('is an ApiBlocksError and a ProblemError, recognised by its kind across copies', () => {
    const error = new BearerError('TOKEN_INVALID', 'Bad.')
    expect(error).toBeInstanceOf(ApiBlocksError)
    expect(error).toBeInstanceOf(ProblemError)
    expect(BearerError.kind).toBe('bearer.BearerError')
    // A copy of the class from another install: a distinct class with the same kind.
    const copy = class BearerError extends ProblemError {
      static override readonly kind: string = 'bearer.BearerError'
    }
    expect(error instanceof copy).toBe(true)
  })

  it('does not show a 503 cause to the client, and sends Retry-After', () => {
    const error = new BearerError('JWKS_UNAVAILABLE', 'GET https://internal/jwks: ECONNREFUSED')
    expect(JSON.stringify(error.toProblem())).not.toContain('internal')
    expect(error.headers).toEqual({ 'retry-after': '5' })
    expect(new BearerError('TOKEN_INVALID', 'x').headers).toEqual({})
  })

  it('lists the required scopes of insufficient_scope in the problem', () => {
    const error = new BearerError('INSUFFICIENT_SCOPE', 'Lacks.', {
      requiredScopes: ['a:b', 'c:d'],
    })
    expect(error.toProblem()).toMatchObject({ required_scopes: ['a:b', 'c:d'] })
    expect(error.requiredScopes).toEqual(['a:b', 'c:d'])
  })
})
