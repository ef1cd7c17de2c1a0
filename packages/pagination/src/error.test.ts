import { errorToProblemResponse, ProblemError } from '@api-blocks/problem-details'
import { describe, expect, test } from 'vitest'
import { PaginationError } from './error.ts'

describe('PaginationError', () => {
  test('cursor reasons answer the invalid-cursor problem, 400', () => {
    const error = new PaginationError('cursor_expired', 'The cursor has expired.')
    expect(error.reason).toBe('cursor_expired')
    expect(error.code).toBe('INVALID_CURSOR')
    expect(error.status).toBe(400)
    expect(error.toProblem()).toMatchObject({
      type: 'invalid-cursor',
      status: 400,
      detail: 'The cursor has expired.',
    })
  })

  test('other reasons answer the bad-request problem, 400', () => {
    const error = new PaginationError('limit_invalid', 'Bad limit.')
    expect(error.code).toBe('BAD_REQUEST')
    expect(error.toProblem()).toMatchObject({ type: 'bad-request', status: 400 })
  })

  test('is a ProblemError, so the last line of defence answers it as its problem', async () => {
    const error = new PaginationError('first_and_last', 'Give either first or last, not both.')
    expect(error).toBeInstanceOf(ProblemError)
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('PaginationError')
    const response = errorToProblemResponse(error)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ detail: 'Give either first or last, not both.' })
  })

  test('instanceof works across duplicate installs (a Symbol.for brand)', () => {
    const fromOtherCopy = { [Symbol.for('api-blocks.pagination-error')]: true }
    expect(fromOtherCopy).toBeInstanceOf(PaginationError)
    expect(new Error('x')).not.toBeInstanceOf(PaginationError)
    expect(null).not.toBeInstanceOf(PaginationError)
  })

  test('passes the cause through', () => {
    const cause = new Error('root')
    expect(new PaginationError('cursor_malformed', 'x', { cause }).cause).toBe(cause)
  })
})
