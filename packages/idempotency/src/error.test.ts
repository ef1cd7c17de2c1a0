import { ApiBlocksError } from '@api-blocks/core'
import { ProblemError } from '@api-blocks/problem-details'
import { describe, expect, test } from 'vitest'
import type { IdempotencyErrorCode } from './error.ts'
import { IdempotencyError } from './error.ts'

describe('IdempotencyError', () => {
  test.each<[IdempotencyErrorCode, number, string]>([
    ['IDEMPOTENCY_KEY_MISSING', 400, 'idempotency-key-missing'],
    ['IDEMPOTENCY_KEY_INVALID', 400, 'idempotency-key-invalid'],
    ['IDEMPOTENCY_KEY_REUSED', 409, 'idempotency-key-reused'],
    ['IDEMPOTENCY_KEY_IN_FLIGHT', 409, 'idempotency-key-in-flight'],
    ['IDEMPOTENCY_LEASE_LOST', 409, 'idempotency-key-in-flight'],
    ['IDEMPOTENCY_SCOPE_UNKNOWN', 500, 'internal'],
    ['BODY_TOO_LARGE', 413, 'payload-too-large'],
    ['BODY_UNREADABLE', 400, 'bad-request'],
    ['STORE_UNAVAILABLE', 503, 'service-unavailable'],
  ])('%s answers %i %s', (code, status, type) => {
    const error = new IdempotencyError(code, 'what happened')
    expect(error).toBeInstanceOf(ApiBlocksError)
    expect(error).toBeInstanceOf(ProblemError)
    expect(error).toMatchObject({ code, status, message: 'what happened' })
    expect(error.toProblem()).toMatchObject({ type, status })
  })

  test('a 500 says nothing of the cause in its problem; the message (for logs) does', () => {
    const error = new IdempotencyError('IDEMPOTENCY_SCOPE_UNKNOWN', 'no principal, no address')
    expect(JSON.stringify(error.toProblem())).not.toContain('principal')
    expect(error.message).toBe('no principal, no address')
  })

  test('a duplicate in flight and a lost lease carry Retry-After, in the header and the problem', () => {
    for (const code of ['IDEMPOTENCY_KEY_IN_FLIGHT', 'IDEMPOTENCY_LEASE_LOST'] as const) {
      const error = new IdempotencyError(code, 'busy', { retryAfter: 3 })
      expect(error.headers).toEqual({ 'retry-after': '3' })
      expect(error.toProblem()).toMatchObject({ retry_after: 3 })
    }
    expect(new IdempotencyError('IDEMPOTENCY_KEY_IN_FLIGHT', 'busy').headers).toEqual({
      'retry-after': '1',
    })
    expect(new IdempotencyError('BODY_TOO_LARGE', 'big', { maxBytes: 9 }).headers).toEqual({})
  })

  test('the ietf profile status of a reused key, and the limit of a large body', () => {
    const reused = new IdempotencyError('IDEMPOTENCY_KEY_REUSED', 'reused', { status: 422 })
    expect(reused.status).toBe(422)
    expect(reused.toProblem().status).toBe(422)
    expect(
      new IdempotencyError('BODY_TOO_LARGE', 'big', { maxBytes: 9 }).toProblem(),
    ).toMatchObject({
      max_bytes: 9,
    })
  })

  test('the cause is kept', () => {
    const cause = new Error('ECONNREFUSED')
    expect(new IdempotencyError('STORE_UNAVAILABLE', 'down', { cause }).cause).toBe(cause)
  })
})
