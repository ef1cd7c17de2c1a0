import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { JsonValue } from './canonical-json.ts'
import { canonicalizeJsonText, canonicalJson, MAX_CANONICAL_JSON_DEPTH } from './canonical-json.ts'

const budget = { interruptAfterTimeLimit: 2000 }

/** Rebuilds every object of `value` with its members in a shuffled order. */
function shuffled(value: JsonValue, random: () => number): JsonValue {
  if (Array.isArray(value)) return value.map((item: JsonValue) => shuffled(item, random))
  if (value === null || typeof value !== 'object') return value
  const entries = Object.entries(value as Record<string, JsonValue>)
  for (let index = entries.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1))
    ;[entries[index], entries[other]] = [entries[other]!, entries[index]!]
  }
  return Object.fromEntries(entries.map(([name, item]) => [name, shuffled(item, random)]))
}

describe('canonicalJson', () => {
  test('sorts members recursively, keeps array order, drops whitespace', () => {
    expect(canonicalJson({ b: [3, 1, { z: 1, a: [] }], a: { y: null, x: true } })).toBe(
      '{"a":{"x":true,"y":null},"b":[3,1,{"a":[],"z":1}]}',
    )
  })

  test('RFC 8785 §3.2.3: members sort by UTF-16 code units, not code points', () => {
    // U+1F600 is \ud83d\ude00: its first unit sorts before U+FB33 though the code point is above.
    expect(canonicalJson({ '\ufb33': 1, '\u{1f600}': 2, '\u00e9': 3, a: 4 })).toBe(
      '{"a":4,"\u00e9":3,"\u{1f600}":2,"\ufb33":1}',
    )
  })

  test('numbers are written as JSON.stringify writes them (RFC 8785 §3.2.2.3)', () => {
    expect(canonicalJson([1.0, 1e2, -0, 0.1, 1e-7, 1e23])).toBe('[1,100,0,0.1,1e-7,1e+23]')
  })

  test('strings are escaped as JSON.stringify escapes them', () => {
    expect(canonicalizeJsonText('"\\u0041\\/\\u00e9\\n"')).toBe('"A/\u00e9\\n"')
  })

  test('a number JSON cannot write (1e400 is Infinity) has no canonical form', () => {
    expect(canonicalizeJsonText('{"n": 1e400}')).toBeUndefined()
  })

  test('nesting deeper than the limit has no canonical form, and does not overflow the stack', () => {
    const deep = `${'['.repeat(MAX_CANONICAL_JSON_DEPTH + 1)}${']'.repeat(MAX_CANONICAL_JSON_DEPTH + 1)}`
    expect(canonicalizeJsonText(deep)).toBeUndefined()
    const ok = `${'['.repeat(MAX_CANONICAL_JSON_DEPTH)}${']'.repeat(MAX_CANONICAL_JSON_DEPTH)}`
    expect(canonicalizeJsonText(ok)).toBe(ok)
    const huge = `${'['.repeat(200_000)}${']'.repeat(200_000)}`
    expect(canonicalizeJsonText(huge)).toBeUndefined()
  })

  test('a duplicate member keeps its last value, as JSON.parse does', () => {
    expect(canonicalizeJsonText('{"a":1,"a":2}')).toBe('{"a":2}')
  })

  test('__proto__ is an ordinary member', () => {
    expect(canonicalizeJsonText('{"__proto__":{"x":1},"a":0}')).toBe('{"__proto__":{"x":1},"a":0}')
    expect(canonicalizeJsonText('{"a":0,"__proto__":{"y":1,"x":2}}')).toBe(
      '{"__proto__":{"x":2,"y":1},"a":0}',
    )
    expect(canonicalizeJsonText('{"_":{"y":1,"x":2},"__proto__":0}')).toBe(
      '{"_":{"x":2,"y":1},"__proto__":0}',
    )
  })

  test('integer-like member names sort as text, not as numbers', () => {
    expect(canonicalizeJsonText('{"b":1,"10":2,"9":3,"a":{"2":0,"11":1}}')).toBe(
      '{"10":2,"9":3,"a":{"11":1,"2":0},"b":1}',
    )
  })

  test('a value already in canonical order is written as it is', () => {
    const text = '{"a":[{"x":1,"y":[true,null,"s"]}],"b":-2.5e-7}'
    expect(canonicalizeJsonText(text)).toBe(text)
  })

  test('objects JSON.stringify would read otherwise are written member by member', () => {
    const bare = Object.assign(Object.create(null) as Record<string, JsonValue>, { b: 1, a: 2 })
    expect(canonicalJson(bare)).toBe('{"a":2,"b":1}')
    const withToJson = { b: 1, a: { toJSON: () => 'no' } } as unknown as JsonValue
    expect(canonicalJson(withToJson)).toBeUndefined()
    // Not JSON values: no canonical form, never `{}` (two dates must not compare equal).
    expect(canonicalJson({ at: new Date(0) } as unknown as JsonValue)).toBeUndefined()
    expect(canonicalJson({ at: new Map() } as unknown as JsonValue)).toBeUndefined()
  })

  test('a number JSON.parse would round, or spell differently, has no canonical form (raw bytes compare)', () => {
    for (const text of [
      '{"amount":9007199254740993}',
      '{"amount":0.1000000000000000000001}',
      '{"amount":1.0}',
      '[1e2]',
      '[-0]',
    ]) {
      expect(canonicalizeJsonText(text), text).toBeUndefined()
    }
    expect(canonicalizeJsonText('{"b":1.5,"a":-2}')).toBe('{"a":-2,"b":1.5}')
    // Integers of up to 15 digits are taken as they are; longer ones are checked.
    expect(canonicalizeJsonText('[0,-1,999999999999999,-999999999999999]')).toBe(
      '[0,-1,999999999999999,-999999999999999]',
    )
    expect(canonicalizeJsonText('[9007199254740992]')).toBe('[9007199254740992]')
    expect(canonicalizeJsonText('[12345678901234567890]')).toBeUndefined()
  })

  test('digits inside strings, escaped quotes included, are not numbers', () => {
    expect(canonicalizeJsonText('{"b":"1.0","a":"x\\"1e2\\\\","c":[ -0.5 ,"-0"]}')).toBe(
      '{"a":"x\\"1e2\\\\","b":"1.0","c":[-0.5,"-0"]}',
    )
    expect(canonicalizeJsonText('["\\u0031.0", 2.50]')).toBeUndefined()
  })

  test('a long string with many escapes is scanned without running out of stack', () => {
    const long = JSON.stringify({ amount: 1, text: '\\"'.repeat(200_000) })
    expect(canonicalizeJsonText(long)).toBe(long)
  })

  test('text that is not JSON gives undefined', () => {
    for (const text of ['', '{', "{'a':1}", '[1,]', 'NaN', '\ufeff{}']) {
      expect(canonicalizeJsonText(text)).toBeUndefined()
    }
  })
})

describe('canonicalJson: properties', () => {
  test('member order and whitespace never change the canonical text', () => {
    fc.assert(
      fc.property(
        fc.jsonValue() as fc.Arbitrary<JsonValue>,
        fc.integer({ min: 0, max: 4 }),
        fc.infiniteStream(fc.double({ min: 0, max: 0.999, noNaN: true })),
        (value, indent, randoms) => {
          const random = () => randoms.next().value as number
          const text = JSON.stringify(shuffled(value, random), null, indent)
          expect(canonicalizeJsonText(text)).toBe(canonicalJson(value))
        },
      ),
      budget,
    )
  })

  test('the canonical text parses back to an equal value and is a fixed point', () => {
    fc.assert(
      fc.property(fc.jsonValue() as fc.Arbitrary<JsonValue>, (value) => {
        const canonical = canonicalJson(value)
        expect(canonical).toBeDefined()
        expect(JSON.parse(canonical as string)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(canonicalizeJsonText(canonical as string)).toBe(canonical)
      }),
      budget,
    )
  })

  test('values that differ give different canonical texts', () => {
    fc.assert(
      fc.property(
        fc.jsonValue() as fc.Arbitrary<JsonValue>,
        // Often close to the first: the same value, or one small value.
        fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<JsonValue>),
        (a, other) => {
          const b = other === undefined ? (JSON.parse(JSON.stringify(a)) as JsonValue) : other
          // Equal canonical texts exactly for values equal up to member order (toEqual ignores
          // member order; the round trip turns -0 into 0, as JSON does).
          const equal = (() => {
            try {
              expect(JSON.parse(JSON.stringify(a))).toEqual(JSON.parse(JSON.stringify(b)))
              return true
            } catch {
              return false
            }
          })()
          expect(canonicalJson(a) === canonicalJson(b)).toBe(equal)
        },
      ),
      budget,
    )
  })

  test('equals an independent writer: members sorted by code units, JSON.stringify for the rest', () => {
    // Written member by member, so objects with integer-like names (which JSON.stringify
    // enumerates first, in numeric order) are checked too.
    const expected = (value: unknown): string => {
      if (Array.isArray(value)) return `[${value.map(expected).join(',')}]`
      if (value === null || typeof value !== 'object') return JSON.stringify(value)
      const record = value as Record<string, unknown>
      const names = Object.keys(record).sort()
      return `{${names.map((name) => `${JSON.stringify(name)}:${expected(record[name])}`).join(',')}}`
    }
    const keyed = fc.jsonValue({ stringUnit: 'binary' }) as fc.Arbitrary<JsonValue>
    const digitKeys = fc.dictionary(
      fc.oneof(fc.nat(1000).map(String), fc.constantFrom('a', 'b', '__proto__', '1a', '01')),
      keyed,
    ) as fc.Arbitrary<JsonValue>
    fc.assert(
      fc.property(fc.oneof(keyed, digitKeys, fc.array(digitKeys)), (value) => {
        const text = expected(value)
        expect(canonicalJson(value)).toBe(text)
        // JSON.stringify spells every number canonically, so its text always has the form.
        expect(canonicalizeJsonText(JSON.stringify(value))).toBe(text)
      }),
      budget,
    )
  })

  test('never throws, for any text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const canonical = canonicalizeJsonText(text)
        if (canonical !== undefined) expect(() => JSON.parse(canonical)).not.toThrow()
      }),
      budget,
    )
  })
})
