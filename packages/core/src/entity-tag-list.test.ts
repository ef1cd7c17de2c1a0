import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  locateEntityTag,
  MAX_CONDITIONAL_HEADER_LENGTH,
  MAX_ENTITY_TAGS,
  scanEntityTagList,
} from './entity-tag-list.ts'

const budget = { interruptAfterTimeLimit: 1500 }

function tagsOf(value: string) {
  const tags: { weak: boolean; opaque: string }[] = []
  const scan = scanEntityTagList(value, (start, end, weak) => {
    tags.push({ weak, opaque: value.slice(start, end) })
  })
  return { scan, tags }
}

describe('scanEntityTagList (RFC 9110 §8.8.3, §13.1.1, §13.1.2)', () => {
  test('lists, "*", empty elements and invalid values', () => {
    expect(tagsOf('"a", W/"b"')).toEqual({
      scan: 2,
      tags: [
        { weak: false, opaque: 'a' },
        { weak: true, opaque: 'b' },
      ],
    })
    expect(tagsOf(' , "a",, ').scan).toBe(1)
    expect(tagsOf('').scan).toBe(0)
    expect(tagsOf(' * ').scan).toBe('any')
    for (const value of ['*, "a"', 'a', '"a" "b"', 'w/"a"', '"a', '"a b"']) {
      expect(tagsOf(value).scan, value).toBe('syntax')
    }
  })

  test('MUST bound the list: 8 KiB and 64 tags', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `"${i}"`).join(',')
    expect(scanEntityTagList(list(MAX_ENTITY_TAGS), () => {})).toBe(MAX_ENTITY_TAGS)
    expect(scanEntityTagList(list(MAX_ENTITY_TAGS + 1), () => {})).toBe('too-many')
    const long = `"${'a'.repeat(MAX_CONDITIONAL_HEADER_LENGTH - 1)}"`
    expect(scanEntityTagList(long, () => {})).toBe('too-long')
    expect(scanEntityTagList(long.slice(1), () => {})).toBe('syntax')
  })

  test('property: never throws, and a valid list of tags scans back to the same tags', () => {
    const etagc = fc.oneof(
      fc.constant('!'),
      fc.integer({ min: 0x23, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
    )
    const tag = fc.record({ weak: fc.boolean(), opaque: fc.string({ unit: etagc, maxLength: 12 }) })
    fc.assert(
      fc.property(fc.array(tag, { maxLength: MAX_ENTITY_TAGS }), (tags) => {
        const value = tags.map((t) => `${t.weak ? 'W/' : ''}"${t.opaque}"`).join(' ,\t')
        expect(tagsOf(value)).toEqual({ scan: tags.length, tags })
      }),
      budget,
    )
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (value) => {
        const scan = scanEntityTagList(value, () => {})
        expect(typeof scan === 'number' || typeof scan === 'string').toBe(true)
        locateEntityTag(value, new Int32Array(3))
      }),
      budget,
    )
  })
})

describe('locateEntityTag', () => {
  test('one tag, with whitespace around it; anything else is not one', () => {
    const out = new Int32Array(3)
    expect(locateEntityTag(' W/"v7"\t', out)).toBe(true)
    expect([out[0], out[1], out[2]]).toEqual([4, 6, 1])
    for (const value of ['', ' ', '"a", "b"', '"a",', 'v7', `"${'a'.repeat(8192)}"`]) {
      expect(locateEntityTag(value, out), value).toBe(false)
    }
  })
})
