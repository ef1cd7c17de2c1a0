import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  formatParameterValue,
  parseParameters,
  parseParameterValue,
  parseQuality,
  splitOutsideQuotes,
} from './syntax.ts'

describe('splitOutsideQuotes (RFC 9110 §5.6.1, §5.6.4)', () => {
  test('commas inside quoted strings do not split', () => {
    expect(splitOutsideQuotes('a, b="x, y", c', ',', 10)).toEqual(['a', 'b="x, y"', 'c'])
  })

  test('a backslash escapes a quote inside a quoted string', () => {
    expect(splitOutsideQuotes('a="x\\", y", b', ',', 10)).toEqual(['a="x\\", y"', 'b'])
  })

  test('empty list elements are ignored', () => {
    expect(splitOutsideQuotes(' , a ,, b , ', ',', 10)).toEqual(['a', 'b'])
  })

  test('at most max parts are returned', () => {
    expect(splitOutsideQuotes('a,b,c,d', ',', 2)).toEqual(['a', 'b'])
  })

  test('an unterminated quote keeps the rest as one part', () => {
    expect(splitOutsideQuotes('a, "b, c', ',', 10)).toEqual(['a', '"b, c'])
  })
})

describe('parameters (RFC 9110 §5.6.6)', () => {
  test('token and quoted-string values', () => {
    expect(parseParameters(['Charset=UTF-8', 'title="a \\"b\\""'])).toEqual([
      ['charset', 'UTF-8'],
      ['title', 'a "b"'],
    ])
  })

  test('a malformed parameter fails the whole list', () => {
    expect(parseParameters(['a=1', 'b'])).toBeUndefined()
    expect(parseParameters(['=1'])).toBeUndefined()
    expect(parseParameters(['a=x y'])).toBeUndefined()
    expect(parseParameters(['a="open'])).toBeUndefined()
  })

  test('qvalues follow RFC 9110 §12.4.2 exactly', () => {
    expect(['0', '0.5', '0.123', '1', '1.000'].map(parseQuality)).toEqual([0, 0.5, 0.123, 1, 1])
    expect(['1.1', '0.1234', '-0', '.5', '', 'x'].map(parseQuality)).toEqual(
      Array(6).fill(undefined),
    )
  })

  test('formatParameterValue round-trips through parseParameterValue', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 60 }).filter((s) => s !== ''),
        (value) => {
          expect(parseParameterValue(formatParameterValue(value))).toBe(value)
        },
      ),
      { interruptAfterTimeLimit: 1000 },
    )
  })

  test('the splitter and the value parser never throw', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (value) => {
        for (const part of splitOutsideQuotes(value, ';', 32)) parseParameterValue(part)
        parseParameters(splitOutsideQuotes(value, ';', 32))
      }),
      { interruptAfterTimeLimit: 1000 },
    )
  })
})
