import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  conditionalDateExample,
  httpDateExamples,
  httpDateExampleTime,
  lastModifiedExample,
} from '../test/rfc9110-vectors.ts'
import { formatHttpDate, parseHttpDate } from './http-date.ts'

const budget = { interruptAfterTimeLimit: 2000 }
const now = Date.UTC(2026, 0, 15)
const YEAR_0 = -62_167_219_200_000 // 0000-01-01T00:00:00Z
const YEAR_10000 = 253_402_300_800_000 // 10000-01-01T00:00:00Z

describe('parseHttpDate (RFC 9110 §5.6.7)', () => {
  test.each(httpDateExamples)('MUST accept the $format example', ({ value }) => {
    expect(parseHttpDate(value, { now })).toBe(httpDateExampleTime)
  })

  test.each([
    [conditionalDateExample, Date.UTC(1994, 9, 29, 19, 43, 31)],
    [lastModifiedExample, Date.UTC(1994, 10, 15, 12, 45, 26)],
    ['Wed Nov 16 08:49:37 1994', Date.UTC(1994, 10, 16, 8, 49, 37)],
    ['Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['Tue, 29 Feb 2000 12:00:00 GMT', Date.UTC(2000, 1, 29, 12)],
  ])('%s', (value, expected) => {
    expect(parseHttpDate(value)).toBe(expected)
  })

  test('years below 100 are not shifted to the 1900s (unlike Date.UTC)', () => {
    expect(parseHttpDate('Sat, 01 Jan 0000 00:00:00 GMT')).toBe(YEAR_0)
  })

  test('a leap second (:60) counts as :59', () => {
    expect(parseHttpDate('Sat, 31 Dec 2016 23:59:60 GMT')).toBe(Date.UTC(2016, 11, 31, 23, 59, 59))
  })

  test('surrounding whitespace is ignored', () => {
    expect(parseHttpDate(`  ${httpDateExamples[0]!.value}\t`)).toBe(httpDateExampleTime)
  })

  describe('RFC 850 two-digit years', () => {
    test('MUST read a year more than 50 years in the future as the most recent past one', () => {
      const in2026 = { now: Date.UTC(2026, 5, 1) }
      expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', in2026)).toBe(httpDateExampleTime)
      // 2076 is exactly 50 years ahead, not more: it stays in the future.
      expect(parseHttpDate('Friday, 06-Nov-76 08:49:37 GMT', in2026)).toBe(
        Date.UTC(2076, 10, 6, 8, 49, 37),
      )
      expect(parseHttpDate('Sunday, 06-Nov-77 08:49:37 GMT', in2026)).toBe(
        Date.UTC(1977, 10, 6, 8, 49, 37),
      )
    })

    test('near a century end, a small two-digit year is in the next century', () => {
      const in2099 = { now: Date.UTC(2099, 5, 1) }
      expect(parseHttpDate('Saturday, 01-Jan-01 00:00:00 GMT', in2099)).toBe(Date.UTC(2101, 0, 1))
    })
  })

  test.each([
    ['ISO 8601', '1994-11-06T08:49:37Z'],
    ['a lower-case day name', 'sun, 06 Nov 1994 08:49:37 GMT'],
    ['a lower-case month', 'Sun, 06 nov 1994 08:49:37 GMT'],
    ['another zone', 'Sun, 06 Nov 1994 08:49:37 UTC'],
    ['a numeric zone', 'Sun, 06 Nov 1994 08:49:37 +0000'],
    ['a one-digit day in IMF-fixdate', 'Sun, 6 Nov 1994 08:49:37 GMT'],
    ['a day that does not exist', 'Fri, 31 Nov 1994 08:49:37 GMT'],
    ['29 February in a common year', 'Tue, 29 Feb 2022 00:00:00 GMT'],
    ['hour 24', 'Sun, 06 Nov 1994 24:00:00 GMT'],
    ['minute 60', 'Sun, 06 Nov 1994 08:60:00 GMT'],
    ['a day name that contradicts the date', 'Mon, 06 Nov 1994 08:49:37 GMT'],
    ['a list of two dates', 'Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT'],
    ['an RFC 850 date with a short day name', 'Sun, 06-Nov-94 08:49:37 GMT'],
    ['an asctime date with a wrong day name', 'Mon Nov  6 08:49:37 1994'],
    ['signs in the digits', 'Sun, +6 Nov 1994 08:49:37 GMT'],
    ['the empty string', ''],
  ])('ignores %s (invalid)', (_, value) => {
    expect(parseHttpDate(value, { now })).toBeUndefined()
  })

  test('parse(format(t)) is t truncated to the second', () => {
    fc.assert(
      fc.property(fc.integer({ min: YEAR_0, max: YEAR_10000 - 1 }), (ms) => {
        expect(parseHttpDate(formatHttpDate(ms))).toBe(Math.floor(ms / 1000) * 1000)
      }),
      budget,
    )
  })

  test('agrees with Date.parse on valid IMF-fixdates', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date(0), max: new Date('9999-12-31'), noInvalidDate: true }),
        (d) => {
          const value = formatHttpDate(d)
          expect(parseHttpDate(value)).toBe(Date.parse(value))
        },
      ),
      budget,
    )
  })

  test('never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (value) => {
        const parsed = parseHttpDate(value, { now })
        if (parsed !== undefined) expect(parsed % 1000).toBe(0)
      }),
      budget,
    )
  })
})

describe('formatHttpDate (IMF-fixdate)', () => {
  test('formats the RFC example', () => {
    expect(formatHttpDate(httpDateExampleTime)).toBe('Sun, 06 Nov 1994 08:49:37 GMT')
    expect(formatHttpDate(new Date(httpDateExampleTime))).toBe('Sun, 06 Nov 1994 08:49:37 GMT')
  })

  test('drops milliseconds (seconds precision), never rounding up', () => {
    expect(formatHttpDate(httpDateExampleTime + 999)).toBe('Sun, 06 Nov 1994 08:49:37 GMT')
  })

  test('pads the year to four digits', () => {
    const d = new Date(0)
    d.setUTCFullYear(999, 0, 1)
    expect(formatHttpDate(d)).toMatch(/^\w{3}, 01 Jan 0999 00:00:00 GMT$/)
  })

  test('refuses an invalid date', () => {
    expect(() => formatHttpDate(new Date(Number.NaN))).toThrow(RangeError)
    expect(() => formatHttpDate(Number.POSITIVE_INFINITY)).toThrow(RangeError)
    expect(() => formatHttpDate(YEAR_10000)).toThrow(RangeError)
    expect(() => formatHttpDate(YEAR_0 - 1000)).toThrow(RangeError)
  })
})
