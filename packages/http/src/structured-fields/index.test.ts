import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { StructuredFieldTest } from '../../test/vectors/structured-field-tests.ts'
import { parsingTests, serialisationTests } from '../../test/vectors/structured-field-tests.ts'
import {
  generatedParsingTests,
  generatedSerialisationTests,
} from '../../test/vectors/structured-field-tests-generated.ts'
import { invalidLists, validLists } from '../../test/vectors/structured-fields.ts'
import type { BareItem, Dictionary, Item, ListMember, Params } from './index.ts'
import {
  isInnerList,
  MAX_STRUCTURED_FIELD_LENGTH,
  parseDictionary,
  parseItem,
  parseList,
  serializeBareItem,
  serializeDictionary,
  serializeItem,
  serializeList,
  serializeString,
} from './index.ts'

// ---------------------------------------------------------------------------------------------
// The httpwg structured-field-tests suite, in its JSON mapping (see the vectors module).

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
function base32(text: string): Uint8Array {
  const bytes: number[] = []
  let buffer = 0
  let bits = 0
  for (const char of text.replace(/=+$/, '')) {
    buffer = (buffer << 5) | BASE32.indexOf(char)
    bits += 5
    if (bits >= 8) {
      bits -= 8
      bytes.push((buffer >> bits) & 0xff)
    }
  }
  return new Uint8Array(bytes)
}

type Json = unknown
function bareOf(value: Json): BareItem {
  if (typeof value === 'number') {
    return Number.isInteger(value) ? { type: 'integer', value } : { type: 'decimal', value }
  }
  if (typeof value === 'string') return { type: 'string', value }
  if (typeof value === 'boolean') return { type: 'boolean', value }
  const typed = value as { __type: string; value: never }
  if (typed.__type === 'binary') return { type: 'binary', value: base32(typed.value) }
  return { type: typed.__type, value: typed.value } as BareItem
}
const paramsOf = (params: Json): Params =>
  (params as [string, Json][]).map(([key, value]) => [key, bareOf(value)])
const itemOf = ([value, params]: Json[]): Item => ({
  value: bareOf(value),
  params: paramsOf(params),
})
const memberOf = (member: Json): ListMember => {
  const [first, params] = member as Json[]
  return Array.isArray(first)
    ? { items: (first as Json[][]).map(itemOf), params: paramsOf(params) }
    : itemOf(member as Json[])
}

type Parsed = Item | ListMember[] | Dictionary
const kinds = {
  item: {
    parse: parseItem,
    serialize: (value: Parsed) => serializeItem(value as Item),
    of: (json: Json): Parsed => itemOf(json as Json[]),
  },
  list: {
    parse: parseList,
    serialize: (value: Parsed) => serializeList(value as ListMember[]),
    of: (json: Json): Parsed => (json as Json[]).map(memberOf),
  },
  dictionary: {
    parse: parseDictionary,
    serialize: (value: Parsed) => serializeDictionary(value as Dictionary),
    of: (json: Json): Parsed =>
      (json as [string, Json][]).map(([key, member]) => [key, memberOf(member)] as const),
  },
}

function runParsing(file: string, tests: readonly StructuredFieldTest[]): void {
  describe(`structured-field-tests ${file}`, () => {
    test.each(tests.map((t) => [t.must_fail ? `MUST fail: ${t.name}` : t.name, t] as const))(
      '%s',
      (_, t) => {
        const kind = kinds[t.header_type]
        const parsed = kind.parse((t.raw ?? []).join(', '))
        if (t.must_fail) return expect(parsed).toBeUndefined()
        // A `can_fail` case is a SHOULD: this parser must then still parse it right.
        expect(parsed).toEqual(kind.of(t.expected))
        expect(kind.serialize(kind.of(t.expected))).toBe((t.canonical ?? t.raw ?? []).join(', '))
      },
    )
  })
}

function runSerialisation(file: string, tests: readonly StructuredFieldTest[]): void {
  describe(`structured-field-tests ${file}`, () => {
    test.each(tests.map((t) => [t.must_fail ? `MUST be refused: ${t.name}` : t.name, t] as const))(
      '%s',
      (_, t) => {
        const kind = kinds[t.header_type]
        const serialize = () => kind.serialize(kind.of(t.expected))
        if (t.must_fail) expect(serialize).toThrow(TypeError)
        else expect(serialize()).toBe((t.canonical ?? []).join(', '))
      },
    )
  })
}

for (const [file, tests] of Object.entries(parsingTests)) runParsing(file, tests)
for (const [file, tests] of Object.entries(generatedParsingTests())) runParsing(file, tests)
for (const [file, tests] of Object.entries(serialisationTests)) runSerialisation(file, tests)
for (const [file, tests] of Object.entries(generatedSerialisationTests())) {
  runSerialisation(file, tests)
}

// ---------------------------------------------------------------------------------------------

const timeBox = { interruptAfterTimeLimit: 3000, numRuns: 1000 }

const bareItem: fc.Arbitrary<BareItem> = fc.oneof(
  fc.integer({ min: -999_999_999_999_999, max: 999_999_999_999_999 }).map((value) => ({
    type: 'integer' as const,
    value: value + 0,
  })),
  fc
    .integer({ min: -999_999_999_999, max: 999_999_999_999 })
    .chain((whole) =>
      fc.integer({ min: 0, max: 999 }).map((thousandths) => ({ whole, thousandths })),
    )
    .map(({ whole, thousandths }) => ({
      type: 'decimal' as const,
      // the nearest double to "<whole>.<thousandths>", as a parser reads it
      value: Number(`${whole}.${String(thousandths).padStart(3, '0')}`) + 0,
    })),
  fc
    .string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) })
    .map((value) => ({ type: 'string' as const, value })),
  fc.stringMatching(/^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]{0,10}$/).map((value) => ({
    type: 'token' as const,
    value,
  })),
  fc.uint8Array({ maxLength: 20 }).map((value) => ({ type: 'binary' as const, value })),
  fc.boolean().map((value) => ({ type: 'boolean' as const, value })),
  fc
    .integer({ min: -1e15 + 1, max: 1e15 - 1 })
    .map((value) => ({ type: 'date' as const, value: value + 0 })),
  fc.string({ unit: 'grapheme' }).map((value) => ({ type: 'displaystring' as const, value })),
)

const key = fc.stringMatching(/^[a-z*][a-z0-9_\-.*]{0,6}$/)
const params = fc.uniqueArray(fc.tuple(key, bareItem), {
  selector: ([name]) => name,
  maxLength: 4,
})
const item = fc.record({ value: bareItem, params })
const member: fc.Arbitrary<ListMember> = fc.oneof(
  item,
  fc.record({ items: fc.array(item, { maxLength: 3 }), params }),
)
const dictionary: fc.Arbitrary<Dictionary> = fc.uniqueArray(fc.tuple(key, member), {
  selector: ([name]) => name,
  maxLength: 5,
})
// Text that looks like structured fields, so that the parsers get deep before they fail.
const fieldLike = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom(...'"\\;=:,()?@%-.1aZ* \t') }),
  fc.array(member, { maxLength: 4 }).map((list) => serializeList(list)),
)

describe('structured fields: published examples', () => {
  test.each(validLists)('$source: $value', ({ value, members }) => {
    expect(parseList(value)).toHaveLength(members)
  })

  test.each(invalidLists)('MUST fail: $why', ({ value }) => {
    expect(parseList(value)).toBeUndefined()
  })

  test('draft -10 §3 example reads as two named policies with q and w', () => {
    expect(parseList('"burst";q=100;w=60,"daily";q=1000;w=86400')).toEqual([
      {
        value: { type: 'string', value: 'burst' },
        params: [
          ['q', { type: 'integer', value: 100 }],
          ['w', { type: 'integer', value: 60 }],
        ],
      },
      {
        value: { type: 'string', value: 'daily' },
        params: [
          ['q', { type: 'integer', value: 1000 }],
          ['w', { type: 'integer', value: 86400 }],
        ],
      },
    ])
  })

  test('a repeated parameter keeps its first place and its last value (RFC 9651 §4.2.3.2)', () => {
    expect(parseList('a;x=1;y=2;x=3')?.[0]?.params).toEqual([
      ['x', { type: 'integer', value: 3 }],
      ['y', { type: 'integer', value: 2 }],
    ])
  })
})

describe('structured fields: properties', () => {
  test('parse(serialize(list)) gives the list back', () => {
    fc.assert(
      fc.property(fc.array(member, { maxLength: 5 }), (list) => {
        const text = serializeList(list)
        fc.pre(text.length <= MAX_STRUCTURED_FIELD_LENGTH)
        expect(parseList(text)).toEqual(list)
      }),
      timeBox,
    )
  })

  test('parse(serialize(item)) gives the item back', () => {
    fc.assert(
      fc.property(item, (value) => {
        expect(parseItem(serializeItem(value))).toEqual(value)
      }),
      timeBox,
    )
  })

  test('parse(serialize(dictionary)) gives the dictionary back', () => {
    fc.assert(
      fc.property(dictionary, (value) => {
        expect(parseDictionary(serializeDictionary(value))).toEqual(value)
      }),
      timeBox,
    )
  })

  test('the parsers never throw, whatever the input (RFC 9651 §4.2: a failure is undefined)', () => {
    fc.assert(
      fc.property(fieldLike, (text) => {
        const list = parseList(text)
        expect(list === undefined || Array.isArray(list)).toBe(true)
        const dict = parseDictionary(text)
        expect(dict === undefined || Array.isArray(dict)).toBe(true)
        const single = parseItem(text)
        expect(single === undefined || typeof single === 'object').toBe(true)
      }),
      timeBox,
    )
    for (const value of [undefined, null, 42, {}, [], Symbol('x')]) {
      expect(parseList(value as never)).toBeUndefined()
      expect(parseDictionary(value as never)).toBeUndefined()
      expect(parseItem(value as never)).toBeUndefined()
    }
  })

  test('what parses serialises, and reads back the same (the canonical form is stable)', () => {
    fc.assert(
      fc.property(fieldLike, (text) => {
        const list = parseList(text)
        if (list !== undefined) expect(parseList(serializeList(list))).toEqual(list)
        const dict = parseDictionary(text)
        if (dict !== undefined) expect(parseDictionary(serializeDictionary(dict))).toEqual(dict)
        const single = parseItem(text)
        if (single !== undefined) expect(parseItem(serializeItem(single))).toEqual(single)
      }),
      timeBox,
    )
  })

  test('a non-ASCII field value MUST fail (RFC 9651 §4.2 step 1), even inside a string', () => {
    expect(parseItem('"caf\u00e9"')).toBeUndefined()
    expect(parseList('a, b\u0080')).toBeUndefined()
    expect(parseDictionary('a=1, b="\u2603"')).toBeUndefined()
  })

  test('isInnerList tells the two member shapes apart', () => {
    const [inner, plain] = parseList('(a b);x=1, c') ?? []
    expect(inner !== undefined && isInnerList(inner)).toBe(true)
    expect(plain !== undefined && isInnerList(plain)).toBe(false)
  })

  test('serialised output is visible ASCII and spaces only', () => {
    fc.assert(
      fc.property(fc.array(member, { maxLength: 5 }), (list) => {
        expect(serializeList(list)).toMatch(/^[\x20-\x7E]*$/)
      }),
      timeBox,
    )
  })

  test('values the syntax cannot carry are refused, not mangled', () => {
    expect(() => serializeString('tab\t')).toThrow(TypeError)
    expect(() => serializeBareItem({ type: 'integer', value: 1e15 })).toThrow(TypeError)
    expect(() => serializeBareItem({ type: 'integer', value: 1.5 })).toThrow(TypeError)
    expect(() => serializeBareItem({ type: 'token', value: '1abc' })).toThrow(TypeError)
    expect(() =>
      serializeList([
        { value: { type: 'boolean', value: true }, params: [['Q', { type: 'integer', value: 1 }]] },
      ]),
    ).toThrow(TypeError)
  })

  test('fields above the length limit are not parsed', () => {
    expect(MAX_STRUCTURED_FIELD_LENGTH).toBe(32_768)
    expect(parseList('a'.repeat(MAX_STRUCTURED_FIELD_LENGTH + 1))).toBeUndefined()
    expect(parseList('a'.repeat(MAX_STRUCTURED_FIELD_LENGTH))).toHaveLength(1)
    expect(parseItem('a'.repeat(MAX_STRUCTURED_FIELD_LENGTH + 1))).toBeUndefined()
    expect(parseDictionary(`a=${'b'.repeat(MAX_STRUCTURED_FIELD_LENGTH)}`)).toBeUndefined()
  })

  test('repeated keys are refused when serialising (they would read back as one)', () => {
    const one: Item = { value: { type: 'integer', value: 1 }, params: [] }
    expect(() =>
      serializeDictionary([
        ['a', one],
        ['a', one],
      ]),
    ).toThrow(TypeError)
    expect(() =>
      serializeItem({
        value: one.value,
        params: [
          ['p', one.value],
          ['p', one.value],
        ],
      }),
    ).toThrow(TypeError)
    expect(
      serializeDictionary(
        new Map([
          ['a', one],
          ['b', one],
        ]),
      ),
    ).toBe('a=1, b=1')
  })

  test('decimals round half to even at three places (RFC 9651 §4.1.5)', () => {
    // 0.0625 and 0.1875 are exact in binary: true ties at the third place
    expect(serializeBareItem({ type: 'decimal', value: 0.0625 })).toBe('0.062')
    expect(serializeBareItem({ type: 'decimal', value: 0.1875 })).toBe('0.188')
    expect(serializeBareItem({ type: 'decimal', value: 2.5 })).toBe('2.5')
    expect(serializeBareItem({ type: 'decimal', value: -0.25 })).toBe('-0.25')
    expect(serializeBareItem({ type: 'decimal', value: 3 })).toBe('3.0')
  })
})
