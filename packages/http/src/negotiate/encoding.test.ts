import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { MAX_ACCEPT_ENCODING_LENGTH, negotiateEncoding, parseAcceptEncoding } from './encoding.ts'
import vectors from './rfc9110-examples.json' with { type: 'json' }

describe('parseAcceptEncoding (RFC 9110 §12.5.3)', () => {
  test('reads codings and weights, lowercased', () => {
    expect(parseAcceptEncoding('GZIP, br;q=0.8, *;q=0')).toEqual([
      { coding: 'gzip', q: 1 },
      { coding: 'br', q: 0.8 },
      { coding: '*', q: 0 },
    ])
  })

  test('SHOULD consider x-gzip equivalent to gzip (RFC 9110 §8.4.1.3)', () => {
    expect(parseAcceptEncoding('x-gzip')).toEqual([{ coding: 'gzip', q: 1 }])
  })

  test('malformed members are skipped', () => {
    expect(parseAcceptEncoding('gzip;q=2, br;q=x, "zstd", deflate;q')).toEqual([])
  })

  test('absent or over the limit is undefined', () => {
    expect(parseAcceptEncoding(null)).toBeUndefined()
    expect(parseAcceptEncoding('gzip,'.repeat(MAX_ACCEPT_ENCODING_LENGTH))).toBeUndefined()
  })
})

describe('negotiateEncoding', () => {
  test.each(vectors.acceptEncoding)(
    'RFC 9110 §12.5.3 example $header with $offers → $choice',
    ({ header, offers, choice }) => {
      expect(negotiateEncoding(header, offers)).toEqual({ choice, vary: ['Accept-Encoding'] })
    },
  )

  test('no Accept-Encoding: identity', () => {
    expect(negotiateEncoding(null, ['gzip']).choice).toBe('identity')
  })

  test('identity MUST NOT be chosen when excluded by identity;q=0 or by *;q=0', () => {
    expect(negotiateEncoding('identity;q=0', []).choice).toBeUndefined()
    expect(negotiateEncoding('*;q=0', []).choice).toBeUndefined()
    expect(negotiateEncoding('identity;q=0, gzip', ['gzip']).choice).toBe('gzip')
    expect(negotiateEncoding('*;q=0, identity', ['gzip']).choice).toBe('identity')
  })

  test('an unlisted identity takes the lowest weight given, so a lone lowered coding still wins', () => {
    expect(negotiateEncoding('gzip;q=0.5', ['gzip']).choice).toBe('gzip')
    expect(negotiateEncoding('gzip;q=0.5, br;q=0.2', []).choice).toBe('identity')
    expect(negotiateEncoding('gzip;q=0', ['gzip']).choice).toBe('identity')
  })

  test('equal weights follow the server order', () => {
    expect(negotiateEncoding('gzip, br, zstd', ['zstd', 'br', 'gzip']).choice).toBe('zstd')
    expect(negotiateEncoding('gzip, br, zstd', ['br', 'gzip']).choice).toBe('br')
  })

  test('hostile values never throw', () => {
    for (const value of [
      '"'.repeat(900),
      ';'.repeat(900),
      'gzip;q=0.5;q=1',
      '\u0000',
      'x'.repeat(5000),
    ]) {
      const { choice } = negotiateEncoding(value, ['gzip'])
      expect([undefined, 'gzip', 'identity']).toContain(choice)
    }
  })

  test('property: total, and the choice is an offer or identity', () => {
    const coding = fc.constantFrom(
      'gzip',
      'br',
      'zstd',
      'deflate',
      'identity',
      '*',
      'x-gzip',
      'compress',
    )
    const member = fc
      .tuple(coding, fc.option(fc.stringMatching(/^[01](\.\d{0,3})?$/)))
      .map(([c, q]) => (q === null ? c : `${c};q=${q}`))
    const header = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.array(member, { maxLength: 8 }).map((m) => m.join(', ')),
    )
    fc.assert(
      fc.property(header, fc.subarray(['zstd', 'br', 'gzip', 'deflate']), (value, offers) => {
        const { choice } = negotiateEncoding(value, offers)
        if (choice !== undefined) expect([...offers, 'identity']).toContain(choice)
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})
