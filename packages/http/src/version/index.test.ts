import { problems } from '@api-blocks/problem-details'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { compose } from '../compose.ts'
import { formatDeprecation, parseDeprecation, versionDeprecation } from './index.ts'
import vectors from './rfc-examples.json' with { type: 'json' }

describe('Deprecation field (RFC 9745 §2.1, an RFC 9651 Date)', () => {
  test.each(vectors.deprecation)('$field ($from)', ({ field, iso }) => {
    expect(parseDeprecation(field)?.toISOString()).toBe(iso)
    expect(formatDeprecation(new Date(iso))).toBe(field)
  })

  test('fractions of a second are dropped', () => {
    expect(formatDeprecation(new Date(1688169599999))).toBe('@1688169599')
  })

  test.each(['1688169599', '@', '@1.5', '@ 1', '@1688169599x', '@1234567890123456', ''])(
    'malformed %j',
    (value) => {
      expect(parseDeprecation(value)).toBeUndefined()
    },
  )

  test('property: format → parse round-trips to the second', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date(-8.64e15 + 1000),
          max: new Date(8.64e15 - 1000),
          noInvalidDate: true,
        }),
        (date) => {
          const seconds = Math.floor(date.getTime() / 1000) * 1000
          expect(parseDeprecation(formatDeprecation(date))?.getTime()).toBe(seconds)
        },
      ),
      { interruptAfterTimeLimit: 1000 },
    )
  })

  test('property: never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (value) => {
        parseDeprecation(value)
      }),
      { interruptAfterTimeLimit: 500 },
    )
  })
})

describe('versionDeprecation()', () => {
  const deprecation = new Date('2023-06-30T23:59:59Z')
  const sunset = new Date('2024-06-30T23:59:59Z')
  const v1 = versionDeprecation({
    prefix: '/v1/',
    deprecation,
    sunset,
    deprecationLink: 'https://developer.example.com/deprecation',
    sunsetLink: 'https://developer.example.com/sunset',
  })
  const app = compose(v1)(
    async () => new Response('ok', { headers: { link: '</v1/orders?page=2>; rel="next"' } }),
  )

  test('adds Deprecation, Sunset and both Link relations under the prefix (RFC 9745 §4 example)', async () => {
    const response = await app(new Request('https://api.example/v1/orders'))
    expect(response.headers.get('deprecation')).toBe('@1688169599')
    expect(response.headers.get('sunset')).toBe('Sun, 30 Jun 2024 23:59:59 GMT')
    expect(response.headers.get('link')).toBe(
      `</v1/orders?page=2>; rel="next", ${vectors.link.field}, <https://developer.example.com/sunset>; rel="sunset"`,
    )
  })

  test('matches the prefix on a segment boundary', async () => {
    for (const path of ['/v1', '/v1/a/b']) {
      expect(
        (await app(new Request(`https://api.example${path}`))).headers.has('deprecation'),
      ).toBe(true)
    }
    for (const path of ['/v10/orders', '/v2/orders', '/']) {
      expect(
        (await app(new Request(`https://api.example${path}`))).headers.has('deprecation'),
      ).toBe(false)
    }
  })

  test('error responses carry the headers too', async () => {
    const failing = compose(v1)(async () => {
      throw problems.notFound.error()
    })
    const response = await failing(new Request('https://api.example/v1/x'))
    expect(response.status).toBe(404)
    expect(response.headers.get('deprecation')).toBe('@1688169599')
  })

  test('the Sunset MUST NOT be earlier than the Deprecation (RFC 9745 §4): refused at configuration', () => {
    expect(() =>
      versionDeprecation({ prefix: '/v1', deprecation: sunset, sunset: deprecation }),
    ).toThrow(RangeError)
    expect(() =>
      versionDeprecation({ prefix: '/v1', deprecation, sunset: deprecation }),
    ).not.toThrow()
  })

  test('refuses invalid dates, prefixes and links', () => {
    expect(() => versionDeprecation({ prefix: '/v1', deprecation: new Date('nope') })).toThrow(
      TypeError,
    )
    expect(() => versionDeprecation({ prefix: 'v1', deprecation })).toThrow(TypeError)
    expect(() =>
      versionDeprecation({ prefix: '/v1', deprecation, deprecationLink: 'https://x/a>b' }),
    ).toThrow(TypeError)
    expect(() =>
      versionDeprecation({ prefix: '/v1', deprecation, sunsetLink: 'has space' }),
    ).toThrow(TypeError)
  })

  test('without a sunset or links only Deprecation is sent', async () => {
    const only = compose(versionDeprecation({ prefix: '/v1', deprecation }))(
      async () => new Response(),
    )
    const response = await only(new Request('https://api.example/v1'))
    expect([...response.headers.keys()]).toEqual(['deprecation'])
  })
})
