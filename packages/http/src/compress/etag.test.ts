import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  CODED_ETAG_SEPARATOR,
  codedEtag,
  ifNoneMatchMatches,
  strongOpaque,
  toIdentityTags,
} from './etag.ts'

const budget = { interruptAfterTimeLimit: 1500 }
const codings = ['zstd', 'br', 'gzip', 'deflate']

// etagc = %x21 / %x23-7E / obs-text (RFC 9110 §8.8.3)
const etagc = fc.oneof(
  fc.constant('!'),
  fc.integer({ min: 0x23, max: 0x7e }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)),
)
const opaque = fc.string({ unit: etagc, maxLength: 20 })
const coding = fc.constantFrom(...codings)

describe('codedEtag (RFC 9110 §8.8.3.3)', () => {
  test('a strong tag gets the coding; a weak one is kept; a malformed one gives undefined', () => {
    expect(codedEtag('"7"', 'gzip')).toBe(`"7${CODED_ETAG_SEPARATOR}gzip"`)
    expect(codedEtag(' "7" ', 'br')).toBe('"7%-br"')
    expect(codedEtag('W/"7"', 'gzip')).toBe('W/"7"')
    for (const value of ['7', '"7', 'w/"7"', '"a b"', '"7", "8"', '']) {
      expect(codedEtag(value, 'gzip'), value).toBeUndefined()
    }
  })

  test('property: distinct (tag, coding) pairs give distinct coded tags, never an identity tag of the same shape', () => {
    fc.assert(
      fc.property(opaque, coding, opaque, coding, (a, codingA, b, codingB) => {
        const left = codedEtag(`"${a}"`, codingA)
        const right = codedEtag(`"${b}"`, codingB)
        expect(left === right).toBe(a === b && codingA === codingB)
      }),
      budget,
    )
  })

  test('property: the handler gets back exactly the identity tag of any coded tag', () => {
    fc.assert(
      fc.property(opaque, coding, (base, name) => {
        const coded = codedEtag(`"${base}"`, name)!
        expect(toIdentityTags(coded, () => true)).toEqual({
          value: `"${base}"`,
          bases: [base],
        })
        expect(strongOpaque(`"${base}"`)).toBe(base)
      }),
      budget,
    )
  })
})

describe('toIdentityTags (If-Match / If-None-Match for the handler)', () => {
  test('maps the kept codings, drops the others, leaves the rest as sent', () => {
    const value = ' "7%-gzip" , W/"7%-gzip",, "7%-br", "8", "7%-", "7%-X" '
    expect(toIdentityTags(value, (name) => name === 'gzip')).toEqual({
      value: '"7", W/"7%-gzip", "8", "7%-", "7%-X"',
      bases: ['7'],
    })
    expect(toIdentityTags(value, () => true)?.value).toBe(
      '"7", W/"7%-gzip", "7", "8", "7%-", "7%-X"',
    )
  })

  test('with others false, only the kept codings reach the handler (If-None-Match on GET and HEAD)', () => {
    const value = '"7%-gzip", "7", W/"7", "7%-br"'
    expect(toIdentityTags(value, (name) => name === 'gzip', false)).toEqual({
      value: '"7"',
      bases: ['7'],
    })
    expect(toIdentityTags('"7", W/"7"', () => false, false)).toEqual({ value: '', bases: [] })
    expect(toIdentityTags('', () => true, false)).toBeUndefined()
  })

  test('a value with nothing to rewrite, *, an invalid list or one past the bounds is left alone', () => {
    const many = (n: number) => Array.from({ length: n }, () => '"7%-gzip"').join(', ')
    expect(toIdentityTags(many(64), () => true)?.bases).toHaveLength(64)
    for (const value of [
      '"7"',
      '*',
      '"7%-gzip" "8"',
      '"7%-gzip", 8',
      '*, "7%-gzip"',
      many(65),
      `"7%-gzip"${' '.repeat(8192)}`,
    ]) {
      expect(
        toIdentityTags(value, () => true),
        value.slice(0, 40),
      ).toBeUndefined()
    }
  })

  test('property: never throws; a rewritten value is a list of at most as many tags', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 80 }),
          fc
            .array(fc.tuple(fc.boolean(), opaque, fc.option(coding)), { maxLength: 6 })
            .map((tags) =>
              tags
                .map(
                  ([weak, base, name]) => `${weak ? 'W/' : ''}"${base}${name ? `%-${name}` : ''}"`,
                )
                .join(', '),
            ),
        ),
        (value) => {
          const rewritten = toIdentityTags(value, (name) => name !== 'br')
          if (rewritten === undefined) return
          expect(rewritten.value.split('"').length).toBeLessThanOrEqual(value.split('"').length)
          for (const base of rewritten.bases) expect(rewritten.value).toContain(`"${base}"`)
        },
      ),
      budget,
    )
  })
})

describe('ifNoneMatchMatches (RFC 9110 §13.1.2: weak comparison)', () => {
  test('the opaque parts are compared, weak or strong; * matches; an invalid list never does', () => {
    expect(ifNoneMatchMatches('"6", W/"7"', '"7"')).toBe(true)
    expect(ifNoneMatchMatches('"7"', 'W/"7"')).toBe(true)
    expect(ifNoneMatchMatches('"7"', '"7%-gzip"')).toBe(false)
    expect(ifNoneMatchMatches('"7%-gzip"', '"7%-gzip"')).toBe(true)
    expect(ifNoneMatchMatches('*', null)).toBe(true)
    expect(ifNoneMatchMatches('"7"', null)).toBe(false)
    expect(ifNoneMatchMatches('"7"', 'not a tag')).toBe(false)
    expect(ifNoneMatchMatches('"7", garbage', '"7"')).toBe(false)
    expect(ifNoneMatchMatches('', '"7"')).toBe(false)
  })

  test('property: never throws, and a list naming the tag matches it', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), opaque, (value, tag) => {
        ifNoneMatchMatches(value, `"${tag}"`)
        expect(ifNoneMatchMatches(`"x", W/"${tag}"`, `"${tag}"`)).toBe(true)
      }),
      budget,
    )
  })
})
