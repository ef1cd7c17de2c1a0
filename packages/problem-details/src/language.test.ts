import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { negotiateLanguage, parseAcceptLanguage } from './language.ts'

describe('parseAcceptLanguage (RFC 9110 §12.5.4)', () => {
  test('the RFC example sorts by weight', () => {
    expect(parseAcceptLanguage('da, en-gb;q=0.8, en;q=0.7')).toEqual([
      { range: 'da', q: 1 },
      { range: 'en-gb', q: 0.8 },
      { range: 'en', q: 0.7 },
    ])
  })

  test('equal weights keep the client order', () => {
    expect(parseAcceptLanguage('fr;q=0.5, de;q=0.5').map((r) => r.range)).toEqual(['fr', 'de'])
  })

  test('malformed members are skipped', () => {
    expect(
      parseAcceptLanguage('en;q=2, de;q=abc, !!, fr-, *;q=0.1, it').map((r) => r.range),
    ).toEqual(['it', '*'])
  })

  test('an oversized value is treated as absent', () => {
    expect(parseAcceptLanguage(`${'en, '.repeat(400)}de`)).toEqual([])
  })

  test('never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 1200 }), (value) => {
        for (const range of parseAcceptLanguage(value)) {
          expect(range.q).toBeGreaterThanOrEqual(0)
          expect(range.q).toBeLessThanOrEqual(1)
        }
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

describe('negotiateLanguage (RFC 4647 §3.4 lookup)', () => {
  const available = ['en', 'de', 'fr-CA', 'zh-Hant']

  test.each([
    ['de-CH-1996', 'de'],
    ['fr-CA', 'fr-CA'],
    ['fr', 'en'],
    ['zh-Hant-CN-x-private1', 'zh-Hant'],
    ['ja, de;q=0.2', 'de'],
    ['*', 'en'],
    ['', 'en'],
    ['DE', 'de'],
  ])('%s → %s', (accept, expected) => {
    expect(negotiateLanguage(accept, available, 'en')).toBe(expected)
  })

  test('q=0 excludes a tag', () => {
    expect(negotiateLanguage('de-AT, de;q=0', available, 'en')).toBe('en')
  })

  test('without a fallback, no match is undefined', () => {
    expect(negotiateLanguage('ja', available)).toBeUndefined()
  })

  test('the result is always one of the available tags or the fallback', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (accept) => {
        const choice = negotiateLanguage(accept, available, 'en')
        expect([...available, 'en']).toContain(choice)
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})
