import { ApiBlocksError } from '@api-blocks/core'
import { errorToProblemResponse, ProblemError } from '@api-blocks/problem-details'
import { describe, expect, test } from 'vitest'
import type { PaginationErrorCode } from './error.ts'
import { PaginationError } from './error.ts'

describe('PaginationError', () => {
  test('CURSOR_* codes answer the invalid-cursor problem, 400', () => {
    const error = new PaginationError('CURSOR_EXPIRED', 'The cursor has expired.')
    expect(error.code).toBe('CURSOR_EXPIRED')
    expect(error.status).toBe(400)
    expect(error.toProblem()).toMatchObject({
      type: 'invalid-cursor',
      status: 400,
      detail: 'The cursor has expired.',
    })
  })

  test('other codes answer the bad-request problem, 400', () => {
    const error = new PaginationError('LIMIT_INVALID', 'Bad limit.')
    expect(error.code).toBe('LIMIT_INVALID')
    expect(error.toProblem()).toMatchObject({ type: 'bad-request', status: 400 })
  })

  test('each code answers its problem type', () => {
    const expected: Record<PaginationErrorCode, string> = {
      CURSOR_TOO_LONG: 'invalid-cursor',
      CURSOR_MALFORMED: 'invalid-cursor',
      CURSOR_VERSION: 'invalid-cursor',
      CURSOR_UNKNOWN_KEY: 'invalid-cursor',
      CURSOR_SIGNATURE: 'invalid-cursor',
      CURSOR_EXPIRED: 'invalid-cursor',
      CURSOR_SORT_MISMATCH: 'invalid-cursor',
      CURSOR_QUERY_MISMATCH: 'invalid-cursor',
      LIMIT_INVALID: 'bad-request',
      PARAMETER_REPEATED: 'bad-request',
      FIRST_AND_LAST: 'bad-request',
      ARGUMENT_INVALID: 'bad-request',
    }
    for (const [code, type] of Object.entries(expected)) {
      const error = new PaginationError(code as PaginationErrorCode, 'x')
      expect([code, error.code, error.toProblem().type]).toEqual([code, code, type])
    }
  })

  test('is a ProblemError, so the last line of defence answers it as its problem', async () => {
    const error = new PaginationError('FIRST_AND_LAST', 'Give either first or last, not both.')
    expect(error).toBeInstanceOf(ProblemError)
    expect(error).toBeInstanceOf(ApiBlocksError)
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('PaginationError')
    const response = errorToProblemResponse(error)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ detail: 'Give either first or last, not both.' })
  })

  test('instanceof works across duplicate installs: by its kind, through ApiBlocksError', () => {
    expect(PaginationError.kind).toBe('pagination.PaginationError')
    // A PaginationError of another copy of the package: another class, the same kind.
    class OtherCopy extends ApiBlocksError {
      static override readonly kind: string = 'pagination.PaginationError'
    }
    expect(new OtherCopy('CURSOR_EXPIRED', 'x', { status: 400 })).toBeInstanceOf(PaginationError)
    expect(new ApiBlocksError('CURSOR_EXPIRED', 'x', { status: 400 })).not.toBeInstanceOf(
      PaginationError,
    )
    expect(new Error('x')).not.toBeInstanceOf(PaginationError)
    expect(null).not.toBeInstanceOf(PaginationError)
  })

  test('passes the cause through', () => {
    const cause = new Error('root')
    expect(new PaginationError('CURSOR_MALFORMED', 'x', { cause }).cause).toBe(cause)
  })
})
