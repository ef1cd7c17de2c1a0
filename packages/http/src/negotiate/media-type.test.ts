import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  MAX_ACCEPT_LENGTH,
  matchesMediaType,
  negotiateMediaType,
  parseAccept,
  parseMediaType,
  weighMediaType,
} from './media-type.ts'
import vectors from './rfc9110-examples.json' with { type: 'json' }

describe('parseMediaType (RFC 9110 §8.3.1)', () => {
  test('lowercases type, subtype and parameter names; keeps values', () => {
    expect(parseMediaType('Application/Vnd.API+JSON; Charset="UTF-8"; q=1')).toEqual({
      type: 'application',
      subtype: 'vnd.api+json',
      suffix: 'json',
      parameters: { charset: 'UTF-8', q: '1' },
    })
  })

  test.each(['', 'json', 'application/', '/json', '*/*', 'text/*', 'a/b;c', 'a b/c', 'a/b;x="1'])(
    'malformed or wildcard %j is undefined',
    (value) => {
      expect(parseMediaType(value)).toBeUndefined()
    },
  )

  test('a value over the limit is treated as absent', () => {
    expect(parseMediaType(`application/json; x="${'a'.repeat(2000)}"`)).toBeUndefined()
  })
})

describe('parseAccept (RFC 9110 §12.5.1)', () => {
  test('reads ranges, weights and parameters; what follows q is not a range parameter', () => {
    expect(parseAccept('text/html;level=1;q=0.5;ext=1, */*;q=0')).toEqual([
      {
        type: 'text',
        subtype: 'html',
        suffix: undefined,
        parameters: { level: '1' },
        q: 0.5,
        index: 0,
      },
      { type: '*', subtype: '*', suffix: undefined, parameters: {}, q: 0, index: 1 },
    ])
  })

  test('malformed members are skipped: */json, bad q, no slash', () => {
    expect(
      parseAccept('*/json, text/html;q=2, text, text/plain;q=0.8').map((r) => r.subtype),
    ).toEqual(['plain'])
  })

  test('a value over MAX_ACCEPT_LENGTH is treated as absent', () => {
    expect(parseAccept(`text/html, ${'a/b, '.repeat(MAX_ACCEPT_LENGTH)}`)).toEqual([])
  })

  test('at most 64 ranges are read', () => {
    expect(parseAccept(Array(500).fill('a/b').join(','))).toHaveLength(64)
  })
})

describe('weights: the most specific matching range wins (RFC 9110 §12.5.1)', () => {
  test.each(vectors.acceptWeights.weights as Array<[string, number]>)('%s → %d', (offer, q) => {
    expect(weighMediaType(vectors.acceptWeights.accept, offer)).toBe(q)
  })

  test('the precedence example: more specific ranges come first', () => {
    const order = vectors.precedence.mostSpecificFirst
    for (let i = 0; i < order.length - 1; i++) {
      const pair = [order[i + 1]!, order[i]!]
      expect(negotiateMediaType(vectors.precedence.accept, pair).choice).toBe(order[i])
    }
  })
})

describe('negotiateMediaType', () => {
  const offers = ['application/json', 'text/csv']

  test('returns the Vary token it used', () => {
    expect(negotiateMediaType('text/csv', offers)).toEqual({ choice: 'text/csv', vary: ['Accept'] })
  })

  test('no Accept, an empty one, or an unusable one means anything: the first offer', () => {
    for (const accept of [
      null,
      undefined,
      '',
      ',,,',
      'garbage',
      'x'.repeat(MAX_ACCEPT_LENGTH + 1),
    ]) {
      expect(negotiateMediaType(accept, offers).choice).toBe('application/json')
    }
  })

  test('parameters the offer does not have are tolerated', () => {
    expect(negotiateMediaType('application/json;charset=utf-8', offers).choice).toBe(
      'application/json',
    )
    expect(
      negotiateMediaType('application/ld+json;profile="x"', ['application/ld+json']).choice,
    ).toBe('application/ld+json')
  })

  test('a parameter the offer has must match (charset case-insensitively)', () => {
    const versioned = ['application/json;v=2', 'application/json;v=1']
    expect(negotiateMediaType('application/json;v=1', versioned).choice).toBe(
      'application/json;v=1',
    )
    expect(
      negotiateMediaType('text/plain;charset=UTF-8', ['text/plain;charset=utf-8']).choice,
    ).toBe('text/plain;charset=utf-8')
    expect(negotiateMediaType('application/json;v=3', versioned).choice).toBeUndefined()
  })

  test('structured suffixes match only when enabled (RFC 6839)', () => {
    expect(negotiateMediaType('application/vnd.acme+json', offers).choice).toBeUndefined()
    expect(
      negotiateMediaType('application/vnd.acme+json', offers, { matchSuffix: true }).choice,
    ).toBe('application/json')
    expect(
      negotiateMediaType('application/json', ['application/problem+json'], { matchSuffix: true })
        .choice,
    ).toBe('application/problem+json')
  })

  test('an exact match beats a suffix match at equal weight', () => {
    const both = ['application/json', 'application/vnd.acme+json']
    expect(
      negotiateMediaType('application/vnd.acme+json', both, { matchSuffix: true }).choice,
    ).toBe('application/vnd.acme+json')
  })

  test('q=0 excludes, also under a wildcard', () => {
    expect(negotiateMediaType('*/*, application/json;q=0', offers).choice).toBe('text/csv')
    expect(negotiateMediaType('application/json;q=0', offers).choice).toBeUndefined()
  })

  test('higher weight wins; equal weights go to the client order, then the server order', () => {
    expect(negotiateMediaType('application/json;q=0.5, text/csv', offers).choice).toBe('text/csv')
    expect(negotiateMediaType('text/csv, application/json', offers).choice).toBe('text/csv')
    expect(negotiateMediaType('*/*', offers).choice).toBe('application/json')
  })

  test('malformed offers are skipped', () => {
    expect(negotiateMediaType('*/*', ['not a type', 'text/csv']).choice).toBe('text/csv')
  })

  test('hostile values: deep quoting, huge q lists, control characters', () => {
    const hostile = [
      `application/json;${'a="\\"",'.repeat(300)}`,
      `${'*/*;q=0.'.repeat(500)}`,
      'application/json;q=1\u0000',
      '"'.repeat(4000),
      ';;;;;;/;;;;',
      'text/html;q=NaN, application/json;q=Infinity',
    ]
    for (const accept of hostile) {
      const { choice } = negotiateMediaType(accept, offers)
      expect(choice === undefined || offers.includes(choice)).toBe(true)
    }
  })

  test('property: negotiation is total and only ever picks an offer', () => {
    const token = fc.stringMatching(/^[a-z*][a-z0-9.+*-]{0,8}$/)
    const range = fc
      .tuple(
        token,
        token,
        fc.option(fc.stringMatching(/^[01](\.\d{0,3})?$/)),
        fc.string({ maxLength: 10 }),
      )
      .map(([t, s, q, junk]) => `${t}/${s}${q === null ? '' : `;q=${q}`}${junk}`)
    const accept = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.array(range, { maxLength: 10 }).map((r) => r.join(', ')),
    )
    const offerList = fc.array(
      fc.tuple(token, token).map(([t, s]) => `${t}/${s}`),
      { maxLength: 5 },
    )
    fc.assert(
      fc.property(accept, offerList, fc.boolean(), (value, list, matchSuffix) => {
        const result = negotiateMediaType(value, list, { matchSuffix })
        expect(result.vary).toEqual(['Accept'])
        if (result.choice !== undefined) expect(list).toContain(result.choice)
        for (const offer of list) {
          const weight = weighMediaType(value, offer, { matchSuffix })
          expect(weight).toBeGreaterThanOrEqual(0)
          expect(weight).toBeLessThanOrEqual(1)
        }
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

describe('matchesMediaType (Content-Type checks)', () => {
  test('ignores parameters the accepted entry does not name', () => {
    expect(matchesMediaType('application/json; charset=utf-8', ['application/json'])).toBe(true)
  })

  test('type/* and type/*+suffix entries', () => {
    expect(matchesMediaType('text/csv', ['text/*'])).toBe(true)
    expect(matchesMediaType('application/merge-patch+json', ['application/*+json'])).toBe(true)
    expect(matchesMediaType('application/json', ['application/*+json'])).toBe(false)
    expect(matchesMediaType('text/json', ['application/*+json'])).toBe(false)
  })

  test('missing, malformed or other types do not match', () => {
    expect(matchesMediaType(null, ['application/json'])).toBe(false)
    expect(matchesMediaType('application', ['application/json'])).toBe(false)
    expect(matchesMediaType('text/plain', ['application/json'])).toBe(false)
  })
})
