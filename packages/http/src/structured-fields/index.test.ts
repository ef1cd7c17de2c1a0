import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { invalidLists, validLists } from '../../test/vectors/structured-fields.ts'
import type { BareItem, ListMember } from './index.ts'
import {
  MAX_STRUCTURED_FIELD_LENGTH,
  parseList,
  serializeBareItem,
  serializeList,
  serializeString,
} from './index.ts'

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

const params = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z*][a-z0-9_\-.*]{0,6}$/), bareItem), {
  selector: ([key]) => key,
  maxLength: 4,
})
const item = fc.record({ value: bareItem, params })
const member: fc.Arbitrary<ListMember> = fc.oneof(
  item,
  fc.record({ items: fc.array(item, { maxLength: 3 }), params }),
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

  test('the parser never throws, whatever the input', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.string({ unit: fc.constantFrom(...'"\\;=:,()?@%-.1aZ* \t') }),
        ),
        (text) => {
          const parsed = parseList(text)
          expect(parsed === undefined || Array.isArray(parsed)).toBe(true)
        },
      ),
      timeBox,
    )
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
    expect(parseList('a'.repeat(MAX_STRUCTURED_FIELD_LENGTH + 1))).toBeUndefined()
    expect(parseList('a'.repeat(MAX_STRUCTURED_FIELD_LENGTH))).toHaveLength(1)
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
