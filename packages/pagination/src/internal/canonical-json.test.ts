import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { canonicalJson } from './canonical-json.ts'

describe('canonicalJson', () => {
  test('members are sorted by name, at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 'x'], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,"x"]},"b":1}',
    )
  })

  test('undefined members are dropped, as JSON.stringify drops them', () => {
    expect(canonicalJson({ a: undefined, b: 2 })).toBe('{"b":2}')
    expect(canonicalJson(undefined)).toBe('null')
  })

  test('array order is kept', () => {
    expect(canonicalJson(['b', 'a'])).not.toBe(canonicalJson(['a', 'b']))
  })

  test('means the same JSON, and does not depend on member order, for any JSON value', () => {
    // Rebuilds every object with its members in reverse insertion order.
    const reverseDeep = (value: unknown): unknown => {
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
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value as never)
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(canonicalJson(reverseDeep(value) as never)).toBe(text)
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})
