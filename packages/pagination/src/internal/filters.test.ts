import { MAX_CANONICAL_JSON_DEPTH } from '@api-blocks/core'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { FilterValue } from './filters.ts'
import { canonicalFilters } from './filters.ts'

const budget = { interruptAfterTimeLimit: 2000 }

// The filter text cursors were hashed with before it went through core's canonicalJson, kept
// here as the reference: every cursor issued before must still match its query. (Sparse
// arrays are left out: it wrote `[,1]` for them, which is not JSON.)
function filterTextBeforeCore(value: FilterValue): string {
  if (value === undefined || value === null) return 'null'
  if (typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) {
    return `[${(value as readonly FilterValue[]).map(filterTextBeforeCore).join(',')}]`
  }
  const record = value as { readonly [name: string]: FilterValue }
  const members: string[] = []
  for (const name of Object.keys(record).sort()) {
    const member = record[name]
    if (member === undefined) continue
    members.push(`${JSON.stringify(name)}:${filterTextBeforeCore(member)}`)
  }
  return `{${members.join(',')}}`
}

// Filter values: JSON plus undefined and the numbers JSON cannot write.
const filterValue: fc.Arbitrary<FilterValue> = fc.letrec<{ value: FilterValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: 'binary' }),
    fc.double(),
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'binary' }), tie('value'), { maxKeys: 4 }),
  ),
})).value

// Rebuilds every object with its members in reverse insertion order.
function reverseDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseDeep)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).reverse()) {
    Object.defineProperty(out, key, {
      value: reverseDeep((value as Record<string, unknown>)[key]),
      enumerable: true,
    })
  }
  return out
}

describe('canonicalFilters', () => {
  test('members are sorted by name, at every depth', () => {
    expect(canonicalFilters({ b: 1, a: { d: [1, 'x'], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,"x"]},"b":1}',
    )
    // Code-unit order, integer-like names included ("10" < "2").
    expect(canonicalFilters({ 2: 'b', 10: 'a', é: 1, z: 0 })).toBe('{"10":"a","2":"b","z":0,"é":1}')
  })

  test('undefined members are left out; undefined alone or in an array is null', () => {
    expect(canonicalFilters({ a: undefined, b: 2 })).toBe('{"b":2}')
    expect(canonicalFilters(undefined)).toBe('null')
    expect(canonicalFilters([undefined, 1])).toBe('[null,1]')
    // biome-ignore lint/suspicious/noSparseArray: a hole reads as undefined
    expect(canonicalFilters([, 1])).toBe('[null,1]')
  })

  test('numbers JSON cannot write are null, as JSON.stringify writes them', () => {
    expect(
      canonicalFilters({ a: Number.NaN, b: [Number.POSITIVE_INFINITY], c: -Infinity, d: -0 }),
    ).toBe('{"a":null,"b":[null],"c":null,"d":0}')
  })

  test('array order is kept', () => {
    expect(canonicalFilters(['b', 'a'])).not.toBe(canonicalFilters(['a', 'b']))
  })

  test('a member named __proto__ stays a member, beside an undefined one', () => {
    const filters = JSON.parse('{"__proto__":{"x":1},"a":2}') as FilterValue
    expect(canonicalFilters(filters)).toBe('{"__proto__":{"x":1},"a":2}')
    const withUndefined = { ...(filters as object), b: undefined } as FilterValue
    expect(canonicalFilters(withUndefined)).toBe('{"__proto__":{"x":1},"a":2}')
  })

  test('the same text as before core wrote it, for any filter value (cursors stay valid)', () => {
    fc.assert(
      fc.property(filterValue, (value) => {
        expect(canonicalFilters(value)).toBe(filterTextBeforeCore(value))
      }),
      budget,
    )
  })

  test('means the same JSON, and does not depend on member order, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalFilters(value as FilterValue)
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(canonicalFilters(reverseDeep(value) as FilterValue)).toBe(text)
      }),
      budget,
    )
  })

  test('refuses what is not a filter value, and nesting deeper than core writes', () => {
    expect(() => canonicalFilters({ a: 1n } as never)).toThrow(TypeError)
    expect(() => canonicalFilters({ a: () => 1 } as never)).toThrow(TypeError)
    // A class instance would hash as `{}` by its enumerable members: every Date the same filter.
    expect(() => canonicalFilters({ since: new Date(0) } as never)).toThrow(TypeError)
    expect(() => canonicalFilters([new Map()] as never)).toThrow(TypeError)
    let deep: FilterValue = 1
    for (let depth = 0; depth <= MAX_CANONICAL_JSON_DEPTH; depth++) deep = [deep]
    expect(() => canonicalFilters(deep)).toThrow(TypeError)
    expect(() => canonicalFilters({ a: undefined, b: deep })).toThrow(TypeError)
  })
})
