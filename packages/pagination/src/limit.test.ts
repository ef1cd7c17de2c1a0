import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { PaginationError } from './error.ts'
import { parseLimit } from './limit.ts'

const policy = { defaultLimit: 20, maxLimit: 100 }

describe('parseLimit (AIP-158 page_size rules)', () => {
  test.each([
    ['absent', [], 20],
    ['null (searchParams.get)', null, 20],
    ['undefined', undefined, 20],
    ['zero means "not given"', ['0'], 20],
    ['00', ['00'], 20],
    ['one', ['1'], 1],
    ['a plain value', ['50'], 50],
    ['a single string', '50', 50],
    ['leading zeros', ['007'], 7],
    ['the maximum', ['100'], 100],
    ['above the maximum is coerced to it', ['101'], 100],
    ['huge is coerced to the maximum', ['99999999999999999999999999'], 100],
    ['400 digits are coerced to the maximum', ['9'.repeat(400)], 100],
  ] as const)('%s → %s', (_, input, expected) => {
    expect(parseLimit(input, policy)).toBe(expected)
  })

  test.each([
    ['negative', '-1'],
    ['negative zero', '-0'],
    ['fractional', '2.5'],
    ['a decimal point', '10.0'],
    ['an exponent', '1e3'],
    ['a plus sign', '+5'],
    ['leading space', ' 5'],
    ['trailing space', '5 '],
    ['empty', ''],
    ['non-numeric', 'ten'],
    ['hexadecimal', '0x10'],
    ['Infinity', 'Infinity'],
    ['NaN', 'NaN'],
    ['full-width digits', '５'],
    ['Arabic-Indic digits', '٥'],
  ])('%s (%j) → 400 bad-request, LIMIT_INVALID', (_, input) => {
    let error: unknown
    try {
      parseLimit([input], policy)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(PaginationError)
    expect((error as PaginationError).code).toBe('LIMIT_INVALID')
    expect((error as PaginationError).toProblem()).toMatchObject({
      type: 'bad-request',
      status: 400,
    })
  })

  test('repeated → 400 bad-request, PARAMETER_REPEATED (even with equal values)', () => {
    for (const values of [
      ['5', '5'],
      ['5', '6'],
      ['', ''],
    ]) {
      expect(() => parseLimit(values, policy)).toThrow(
        expect.objectContaining({ code: 'PARAMETER_REPEATED', status: 400 }),
      )
    }
  })

  test('a policy that cannot work is a RangeError', () => {
    expect(() => parseLimit([], { defaultLimit: 0, maxLimit: 10 })).toThrow(RangeError)
    expect(() => parseLimit([], { defaultLimit: 20, maxLimit: 10 })).toThrow(RangeError)
    expect(() => parseLimit([], { defaultLimit: 1, maxLimit: 1.5 })).toThrow(RangeError)
  })

  test('any value gives a size from 1 to the maximum or the 400 error, nothing else', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 30 }), { maxLength: 2 }),
        (values) => {
          try {
            const limit = parseLimit(values, policy)
            expect(Number.isInteger(limit) && limit >= 1 && limit <= 100).toBe(true)
          } catch (error) {
            expect(error).toBeInstanceOf(PaginationError)
            expect((error as PaginationError).status).toBe(400)
          }
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })

  test('any whole number parses to itself, clamped', () => {
    fc.assert(
      fc.property(fc.nat(), (n) => {
        expect(parseLimit([String(n)], policy)).toBe(n === 0 ? 20 : Math.min(n, 100))
      }),
      { interruptAfterTimeLimit: 1000 },
    )
  })
})
