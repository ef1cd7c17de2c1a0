import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { IdempotencyError } from './error.ts'
import { formatIdempotencyKey, MAX_IDEMPOTENCY_KEY_LENGTH, parseIdempotencyKey } from './key.ts'

const budget = { interruptAfterTimeLimit: 2000 }
// Characters that matter to the grammar, often; then any UTF-16 unit below U+0400.
const fieldUnit = fc.oneof(
  fc.constantFrom('"', '\\', ',', ' ', '\t', ';', '=', 'a', '0'),
  fc.integer({ min: 0, max: 0x3ff }).map((code) => String.fromCharCode(code)),
)
const fieldValue = fc.oneof(
  fc.string({ unit: fieldUnit, maxLength: 40 }),
  fc.string({ unit: fieldUnit, maxLength: 40 }).map((inner) => `"${inner}"`),
  fc.string({ unit: fieldUnit, minLength: 250, maxLength: 600 }),
)
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  minLength: 1,
  maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
})

function codeOf(value: string): string | undefined {
  try {
    parseIdempotencyKey(value)
    return undefined
  } catch (error) {
    return error instanceof IdempotencyError ? error.code : 'not an IdempotencyError'
  }
}

describe('parseIdempotencyKey: the two forms', () => {
  test('an sf-string (the draft, RFC 8941 §3.3.3) is unquoted', () => {
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe(
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    )
  })

  test('a bare token (Stripe) is taken as is, and is the same key as its quoted form', () => {
    expect(parseIdempotencyKey('8e03978e-40d5')).toBe(parseIdempotencyKey('"8e03978e-40d5"'))
  })

  test('RFC 8941 §4.2.5: \\" and \\\\ escapes are decoded', () => {
    expect(parseIdempotencyKey('"a\\"b\\\\c"')).toBe('a"b\\c')
  })

  test('surrounding spaces and tabs are ignored (RFC 9110 §5.5), inner spaces kept', () => {
    expect(parseIdempotencyKey(' \t"a b"\t ')).toBe('a b')
    expect(parseIdempotencyKey('  a b  ')).toBe('a b')
  })

  test('a key of exactly 255 characters is accepted, in both forms', () => {
    const key = 'k'.repeat(255)
    expect(parseIdempotencyKey(key)).toBe(key)
    expect(parseIdempotencyKey(`"${key}"`)).toBe(key)
    // 255 escaped quotes: 512 characters on the wire, 255 once unquoted.
    expect(parseIdempotencyKey(`"${'\\"'.repeat(255)}"`)).toBe('"'.repeat(255))
  })
})

describe('parseIdempotencyKey: refusals are IDEMPOTENCY_KEY_INVALID (400)', () => {
  test.each([
    ['empty', ''],
    ['only spaces', '   '],
    ['an empty sf-string', '""'],
    ['256 characters', 'k'.repeat(256)],
    ['256 characters, quoted', `"${'k'.repeat(256)}"`],
    ['10 KB', 'k'.repeat(10 * 1024)],
    ['10 KB, quoted', `"${'k'.repeat(10 * 1024)}"`],
    ['a control character (SOH)', 'ab\u0001cd'],
    ['a control character in a quoted string', '"ab\u0001cd"'],
    ['a tab inside', 'ab\tcd'],
    ['DEL', 'ab\u007fcd'],
    ['a Latin-1 byte', 'caf\u00e9'],
    ['a non-ASCII character', 'key-\u2603'],
    ['an unterminated sf-string', '"abc'],
    ['a bad escape (RFC 8941 §4.2.5 step 4.2)', '"a\\bc"'],
    ['a trailing backslash', '"abc\\'],
    ['parameters after the string', '"abc";x=1'],
    ['two keys (a repeated field, joined by a comma)', '"a", "b"'],
    ['two bare keys', 'a, b'],
    ['a quote inside a bare key', 'ab"c'],
  ])('%s', (_, value) => {
    expect(codeOf(value)).toBe('IDEMPOTENCY_KEY_INVALID')
  })

  test('the problem is 400 idempotency-key-invalid and never echoes the key', () => {
    const secret = `secret-${'x'.repeat(300)}`
    try {
      parseIdempotencyKey(secret)
      expect.unreachable()
    } catch (error) {
      const problem = (error as IdempotencyError).toProblem()
      expect(problem.status).toBe(400)
      expect(problem.type).toBe('idempotency-key-invalid')
      expect(JSON.stringify(problem)).not.toContain('secret')
    }
  })
})

describe('parseIdempotencyKey: properties', () => {
  test('never throws anything but IdempotencyError, for any string', () => {
    fc.assert(
      fc.property(fieldValue, (value) => {
        expect(codeOf(value)).not.toBe('not an IdempotencyError')
      }),
      budget,
    )
  })

  test('what it accepts is 1 to 255 characters of printable ASCII', () => {
    fc.assert(
      fc.property(fieldValue, (value) => {
        if (codeOf(value) !== undefined) return
        const key = parseIdempotencyKey(value)
        expect(key.length).toBeGreaterThanOrEqual(1)
        expect(key.length).toBeLessThanOrEqual(255)
        expect(key).toMatch(/^[\x20-\x7e]+$/)
      }),
      budget,
    )
  })

  test('round trip: parse(format(key)) === key for every valid key', () => {
    fc.assert(
      fc.property(printable, (key) => {
        expect(parseIdempotencyKey(formatIdempotencyKey(key))).toBe(key)
      }),
      budget,
    )
  })

  test('a bare key without quote, comma or edge spaces parses to itself', () => {
    fc.assert(
      fc.property(
        printable.filter((key) => !/[",]/.test(key) && key.trim() === key && key !== ''),
        (key) => {
          expect(parseIdempotencyKey(key)).toBe(key)
        },
      ),
      budget,
    )
  })
})

describe('formatIdempotencyKey', () => {
  test('quotes and escapes (RFC 8941 §4.1.6)', () => {
    expect(formatIdempotencyKey('a"b\\c')).toBe('"a\\"b\\\\c"')
  })

  test.each([[''], ['k'.repeat(256)], ['tab\there'], ['caf\u00e9']])('refuses %j', (key) => {
    expect(() => formatIdempotencyKey(key)).toThrow(TypeError)
  })
})
