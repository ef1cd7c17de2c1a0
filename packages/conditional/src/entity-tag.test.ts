import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  comparisonTable,
  etagExamples,
  ifMatchExamples,
  ifNoneMatchExamples,
} from '../test/rfc9110-vectors.ts'
import type { EntityTag } from './entity-tag.ts'
import {
  formatEntityTag,
  MAX_CONDITIONAL_HEADER_LENGTH,
  MAX_ENTITY_TAGS,
  parseEntityTag,
  parseEntityTagList,
  strongCompare,
  weakCompare,
} from './entity-tag.ts'
import { matchList } from './internal/scan.ts'

// matchList takes the current tag as a region of a string; here, the whole of its opaque part.
const matchEntityTagList = (value: string, tag: EntityTag | undefined, strong: boolean) =>
  tag === undefined
    ? matchList(value, undefined, 0, 0, false, strong)
    : matchList(value, tag.opaque, 0, tag.opaque.length, tag.weak, strong)

const budget = { interruptAfterTimeLimit: 2000 }

// etagc = %x21 / %x23-7E / obs-text
const etagc = fc.oneof(
  fc.constant('!'),
  fc.integer({ min: 0x23, max: 0x7e }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)),
)
const entityTag: fc.Arbitrary<EntityTag> = fc.record({
  weak: fc.boolean(),
  opaque: fc.string({ unit: etagc, maxLength: 24 }),
})
const ows = fc.constantFrom('', ' ', '\t', '  ', ' \t')

describe('parseEntityTag (RFC 9110 §8.8.3)', () => {
  test.each(etagExamples)('the RFC example $value', ({ value, weak, opaque }) => {
    expect(parseEntityTag(value)).toEqual({ weak, opaque })
  })

  test('surrounding whitespace is ignored', () => {
    expect(parseEntityTag(' \t"a"  ')).toEqual({ weak: false, opaque: 'a' })
  })

  test.each([
    ['unquoted', 'xyzzy'],
    ['a lower-case weak prefix (the grammar is %s"W/", case-sensitive)', 'w/"xyzzy"'],
    ['an unterminated quote', '"xyzzy'],
    ['a DQUOTE inside', '"xy"zzy"'],
    ['a space inside', '"xy zzy"'],
    ['a control character inside', '"xy\u0001"'],
    ['a character above U+00FF', '"xy\u0100"'],
    ['two tags', '"a", "b"'],
    ['trailing text', '"a"b'],
    ['a space between W/ and the quote', 'W/ "a"'],
    ['the empty string', ''],
  ])('MUST NOT accept %s', (_, value) => {
    expect(parseEntityTag(value)).toBeUndefined()
  })

  test('a comma is an ordinary etagc, not a separator', () => {
    expect(parseEntityTag('"a,b"')).toEqual({ weak: false, opaque: 'a,b' })
  })

  test('obs-text (%x80-FF) is allowed', () => {
    expect(parseEntityTag('"caf\u00e9"')).toEqual({ weak: false, opaque: 'caf\u00e9' })
  })

  test('format(parse(x)) round-trips every valid tag', () => {
    fc.assert(
      fc.property(entityTag, ows, ows, (tag, before, after) => {
        const wire = formatEntityTag(tag)
        const parsed = parseEntityTag(before + wire + after)
        expect(parsed).toEqual(tag)
        expect(formatEntityTag(parsed!)).toBe(wire)
      }),
      budget,
    )
  })

  test('never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (value) => {
        const parsed = parseEntityTag(value)
        if (parsed !== undefined) expect(parseEntityTag(formatEntityTag(parsed))).toEqual(parsed)
      }),
      budget,
    )
  })
})

describe('formatEntityTag', () => {
  test('writes strong and weak tags', () => {
    expect(formatEntityTag({ weak: false, opaque: 'xyzzy' })).toBe('"xyzzy"')
    expect(formatEntityTag({ weak: true, opaque: 'xyzzy' })).toBe('W/"xyzzy"')
  })

  test('refuses an opaque part the grammar cannot carry', () => {
    expect(() => formatEntityTag({ weak: false, opaque: 'a"b' })).toThrow(TypeError)
    expect(() => formatEntityTag({ weak: false, opaque: 'a b' })).toThrow(TypeError)
  })
})

describe('comparison (RFC 9110 §8.8.3.2)', () => {
  test.each(comparisonTable)('$a vs $b: strong $strong, weak $weak', ({ a, b, strong, weak }) => {
    expect(strongCompare(a, b)).toBe(strong)
    expect(strongCompare(b, a)).toBe(strong)
    expect(weakCompare(a, b)).toBe(weak)
    expect(weakCompare(b, a)).toBe(weak)
  })

  test('parsed tags compare like their wire forms', () => {
    expect(strongCompare({ weak: false, opaque: '1' }, '"1"')).toBe(true)
    expect(weakCompare({ weak: true, opaque: '1' }, { weak: false, opaque: '1' })).toBe(true)
  })

  test('a string that is not an entity tag matches nothing', () => {
    expect(strongCompare('1', '1')).toBe(false)
    expect(weakCompare('1', '"1"')).toBe(false)
  })

  test('wire-form strings compare exactly like their parsed tags', () => {
    const wire = fc.oneof(
      entityTag.map(formatEntityTag),
      fc.constantFrom('"a"', 'W/"a"', ' "a" ', 'a', '"a', ''),
      fc.string({ maxLength: 10 }),
    )
    fc.assert(
      fc.property(wire, wire, (a, b) => {
        const left = parseEntityTag(a)
        const right = parseEntityTag(b)
        const valid = left !== undefined && right !== undefined
        expect(strongCompare(a, b)).toBe(valid && strongCompare(left, right))
        expect(weakCompare(a, b)).toBe(valid && weakCompare(left, right))
        expect(weakCompare(a, a)).toBe(left !== undefined)
      }),
      budget,
    )
  })

  test('strong match implies weak match, and both are symmetric', () => {
    fc.assert(
      fc.property(entityTag, entityTag, (a, b) => {
        if (strongCompare(a, b)) expect(weakCompare(a, b)).toBe(true)
        expect(strongCompare(a, b)).toBe(strongCompare(b, a))
        expect(weakCompare(a, b)).toBe(weakCompare(b, a))
      }),
      budget,
    )
  })
})

describe('parseEntityTagList (If-Match / If-None-Match, RFC 9110 §13.1.1, §13.1.2, §5.6.1)', () => {
  test.each([...ifMatchExamples, ...ifNoneMatchExamples])('the RFC example %s parses', (value) => {
    expect(parseEntityTagList(value).kind).not.toBe('invalid')
  })

  test('a list keeps order and weakness', () => {
    expect(parseEntityTagList('W/"xyzzy", "r2d2xxxx",W/"c3piozzzz"')).toEqual({
      kind: 'tags',
      tags: [
        { weak: true, opaque: 'xyzzy' },
        { weak: false, opaque: 'r2d2xxxx' },
        { weak: true, opaque: 'c3piozzzz' },
      ],
    })
  })

  test('"*" alone, with whitespace around it, is any', () => {
    expect(parseEntityTagList(' * ')).toEqual({ kind: 'any' })
  })

  test('MUST parse and ignore empty list elements (§5.6.1)', () => {
    expect(parseEntityTagList(', "a" ,, "b",')).toEqual({
      kind: 'tags',
      tags: [
        { weak: false, opaque: 'a' },
        { weak: false, opaque: 'b' },
      ],
    })
    expect(parseEntityTagList('')).toEqual({ kind: 'tags', tags: [] })
  })

  test('commas inside a tag do not split it (unlike a naive split)', () => {
    expect(parseEntityTagList('"a,b", "c"')).toEqual({
      kind: 'tags',
      tags: [
        { weak: false, opaque: 'a,b' },
        { weak: false, opaque: 'c' },
      ],
    })
  })

  test.each([
    ['an unquoted member', '"a", b'],
    ['unquoted tags only', 'a, b'],
    ['"*" mixed with tags', '*, "a"'],
    ['two stars', '*, *'],
    ['two tags without a comma', '"a" "b"'],
    ['an unterminated tag', '"a", "b'],
  ])('%s makes the whole value invalid', (_, value) => {
    expect(parseEntityTagList(value)).toEqual({ kind: 'invalid', reason: 'syntax' })
  })

  test(`more than ${MAX_ENTITY_TAGS} tags is invalid (too-many)`, () => {
    const tags = (n: number) => Array.from({ length: n }, (_, i) => `"${i}"`).join(', ')
    expect(parseEntityTagList(tags(MAX_ENTITY_TAGS)).kind).toBe('tags')
    expect(parseEntityTagList(tags(MAX_ENTITY_TAGS + 1))).toEqual({
      kind: 'invalid',
      reason: 'too-many',
    })
  })

  test(`a value longer than ${MAX_CONDITIONAL_HEADER_LENGTH} characters is invalid (too-long)`, () => {
    const long = `"${'a'.repeat(MAX_CONDITIONAL_HEADER_LENGTH - 1)}"`
    expect(parseEntityTagList(long)).toEqual({ kind: 'invalid', reason: 'too-long' })
    expect(parseEntityTagList(long.slice(1)).kind).toBe('invalid')
  })

  test('a formatted list of tags round-trips', () => {
    fc.assert(
      fc.property(fc.array(entityTag, { maxLength: 10 }), ows, (tags, space) => {
        const value = tags.map(formatEntityTag).join(`${space},${space}`)
        expect(parseEntityTagList(value)).toEqual({ kind: 'tags', tags })
      }),
      budget,
    )
  })

  test('never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (value) => {
        expect(['any', 'tags', 'invalid']).toContain(parseEntityTagList(value).kind)
      }),
      budget,
    )
  })
})

describe('matchList (the allocation-free matcher used by evaluatePreconditions)', () => {
  const reference = (value: string, current: EntityTag | undefined, strong: boolean) => {
    const list = parseEntityTagList(value)
    if (list.kind === 'invalid') return 'invalid'
    if (list.kind === 'any') return 'any'
    if (current === undefined) return 'no-match'
    const compare = strong ? strongCompare : weakCompare
    return list.tags.some((tag) => compare(tag, current)) ? 'match' : 'no-match'
  }

  test('a matching tag followed by garbage is still invalid (the whole value is scanned)', () => {
    expect(matchEntityTagList('"a", garbage', { weak: false, opaque: 'a' }, false)).toBe('invalid')
  })

  test('agrees with parse-then-compare on valid lists', () => {
    fc.assert(
      fc.property(
        fc.array(entityTag, { maxLength: 6 }),
        fc.option(entityTag, { nil: undefined }),
        fc.boolean(),
        fc.nat(),
        (tags, current, strong, pick) => {
          // Put the current tag (or its weak twin) in the list half of the time.
          const list = [...tags]
          if (current !== undefined && pick % 2 === 0) {
            list.splice(pick % (list.length + 1), 0, { ...current, weak: pick % 4 === 0 })
          }
          const value = list.map(formatEntityTag).join(', ')
          expect(matchEntityTagList(value, current, strong)).toBe(reference(value, current, strong))
        },
      ),
      budget,
    )
  })

  test('agrees with parse-then-compare on any string', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 100 }),
        entityTag,
        fc.boolean(),
        (value, current, strong) => {
          expect(matchEntityTagList(value, current, strong)).toBe(reference(value, current, strong))
        },
      ),
      budget,
    )
  })
})
