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

  test('every code is UPPER_SNAKE_CASE and picks its problem by its prefix', () => {
    const codes: PaginationErrorCode[] = [
      'CURSOR_TOO_LONG',
      'CURSOR_MALFORMED',
      'CURSOR_VERSION',
      'CURSOR_UNKNOWN_KEY',
      'CURSOR_SIGNATURE',
      'CURSOR_EXPIRED',
      'CURSOR_SORT_MISMATCH',
      'CURSOR_QUERY_MISMATCH',
      'LIMIT_INVALID',
      'PARAMETER_REPEATED',
      'FIRST_AND_LAST',
      'ARGUMENT_INVALID',
    ]
    for (const code of codes) {
      const error = new PaginationError(code, 'x')
      expect(error.code).toMatch(/^[A-Z]+(?:_[A-Z]+)*$/)
      expect(error.toProblem().type).toBe(
        code.startsWith('CURSOR_') ? 'invalid-cursor' : 'bad-request',
      )
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
