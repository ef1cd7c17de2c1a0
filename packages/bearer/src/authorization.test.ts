import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  hasQueryAccessToken,
  MAX_ACCESS_TOKEN_LENGTH,
  owsBounds,
  parseBearerAuthorization,
} from './authorization.ts'

const budget = { interruptAfterTimeLimit: 2000 }

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const b64char = fc.constantFrom(
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/',
)
const b64token = fc
  .tuple(fc.string({ unit: b64char, minLength: 1, maxLength: 300 }), fc.nat({ max: 3 }))
  .map(([body, pad]) => body + '='.repeat(pad))
const bearerScheme = fc
  .array(fc.boolean(), { minLength: 6, maxLength: 6 })
  .map((upper) =>
    [...'bearer'].map((char, index) => (upper[index] ? char.toUpperCase() : char)).join(''),
  )

describe('parseBearerAuthorization (RFC 6750 §2.1)', () => {
  it('reads the token of `Bearer <b64token>` (the RFC 6750 §2.1 example)', () => {
    expect(parseBearerAuthorization('Bearer mF_9.B5f-4.1JqM')).toEqual({
      type: 'token',
      token: 'mF_9.B5f-4.1JqM',
    })
  })

  it('MUST match the scheme without regard to case (RFC 9110 §11.1)', () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      expect(parseBearerAuthorization(`${scheme} abc`)).toEqual({ type: 'token', token: 'abc' })
    }
  })

  it('answers missing for no field and for credentials of another scheme (RFC 6750 §3.1)', () => {
    expect(parseBearerAuthorization(null)).toEqual({ type: 'missing' })
    expect(parseBearerAuthorization(undefined)).toEqual({ type: 'missing' })
    expect(parseBearerAuthorization('')).toEqual({ type: 'missing' })
    expect(parseBearerAuthorization('Basic czZCaGRSa3F0MzpnWDFmQmF0M2JW')).toEqual({
      type: 'missing',
    })
    expect(parseBearerAuthorization('DPoP abc')).toEqual({ type: 'missing' })
    expect(parseBearerAuthorization('Bearerx abc')).toEqual({ type: 'missing' })
  })

  it.each([
    ['Bearer', 'no token'],
    ['Bearer ', 'no token'],
    ['Bearer a b', 'a space inside'],
    ['Bearer a,b', 'a comma'],
    ['Bearer "abc"', 'a quoted string'],
    ['Bearer ab=c', '= before the end'],
    ['Bearer abc\tdef', 'a tab'],
    ['Bearer a%20b', 'a percent sign'],
    ['Bearer token="abc"', 'auth-params instead of a token68'],
  ])('refuses %j as malformed (%s)', (field) => {
    expect(parseBearerAuthorization(field).type).toBe('malformed')
  })

  it('MUST refuse duplicated Authorization fields (joined by ", ") as invalid_request', () => {
    const headers = new Headers()
    headers.append('authorization', 'Bearer first')
    headers.append('authorization', 'Bearer second')
    expect(parseBearerAuthorization(headers.get('authorization'))).toEqual({
      type: 'malformed',
      reason: 'The request carries more than one set of credentials.',
    })
    expect(parseBearerAuthorization('Basic abc, Bearer def').type).toBe('malformed')
    expect(parseBearerAuthorization('Basic abc, bearer').type).toBe('malformed')
  })

  it(`refuses a token over ${MAX_ACCESS_TOKEN_LENGTH} characters, accepts one of exactly that`, () => {
    const limit = 'a'.repeat(MAX_ACCESS_TOKEN_LENGTH)
    expect(parseBearerAuthorization(`Bearer ${limit}`)).toEqual({ type: 'token', token: limit })
    expect(parseBearerAuthorization(`Bearer ${limit}a`).type).toBe('malformed')
    expect(parseBearerAuthorization(`Bearer ${'a'.repeat(100_000)}`).type).toBe('malformed')
  })

  it('accepts several spaces after the scheme and surrounding whitespace (RFC 9110 §11.4, §5.5)', () => {
    expect(parseBearerAuthorization('  Bearer   abc== \t')).toEqual({
      type: 'token',
      token: 'abc==',
    })
  })

  it('parses fields of 4 KiB of whitespace around or inside the credentials', () => {
    const ws = ' \t'.repeat(2048)
    expect(parseBearerAuthorization(ws)).toEqual({ type: 'missing' })
    expect(parseBearerAuthorization(`Bearer abc${ws}`)).toEqual({ type: 'token', token: 'abc' })
    expect(parseBearerAuthorization(`${ws}Bearer abc`)).toEqual({ type: 'token', token: 'abc' })
    expect(parseBearerAuthorization(`Bearer ${ws}x`).type).toBe('malformed')
  })

  it('trims whitespace reading each character at most once (linear, whatever the input)', () => {
    for (const text of [
      ' '.repeat(4160),
      `${' \t'.repeat(2000)}x${'\t '.repeat(2000)}`,
      'abc',
      '',
    ]) {
      let reads = 0
      const counted = {
        length: text.length,
        charCodeAt(index: number): number {
          reads++
          return text.charCodeAt(index)
        },
      }
      const { start, end } = owsBounds(counted)
      expect(reads).toBeLessThanOrEqual(text.length + 1)
      expect(text.slice(start, end)).toBe(text.replace(/^[ \t]+|[ \t]+$/g, ''))
    }
  })

  it('never throws, whatever the field (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' })), (field) => {
        const found = parseBearerAuthorization(field)
        expect(['token', 'missing', 'malformed']).toContain(found.type)
        if (found.type === 'token') {
          expect(found.token.length).toBeLessThanOrEqual(MAX_ACCESS_TOKEN_LENGTH)
          expect(found.token).toMatch(/^[A-Za-z0-9._~+/-]+=*$/)
        }
      }),
      budget,
    )
  })

  it('round trips: every b64token, sent with any case of the scheme, is read back (property)', () => {
    fc.assert(
      fc.property(
        bearerScheme,
        b64token,
        fc.integer({ min: 1, max: 3 }),
        (scheme, token, spaces) => {
          const field = `${scheme}${' '.repeat(spaces)}${token}`
          expect(parseBearerAuthorization(field)).toEqual({ type: 'token', token })
          // What the Headers class makes of it changes nothing.
          const headers = new Headers({ authorization: field })
          expect(parseBearerAuthorization(headers.get('authorization'))).toEqual({
            type: 'token',
            token,
          })
        },
      ),
      budget,
    )
  })
})

describe('hasQueryAccessToken (RFC 6750 §2.3)', () => {
  it('finds access_token in the query, encoded or not, and nothing else', () => {
    expect(hasQueryAccessToken('https://api.example/orders?access_token=abc')).toBe(true)
    expect(hasQueryAccessToken('https://api.example/orders?a=1&access%5Ftoken=abc')).toBe(true)
    expect(hasQueryAccessToken('https://api.example/orders?access_token')).toBe(true)
    expect(hasQueryAccessToken('https://api.example/orders')).toBe(false)
    expect(hasQueryAccessToken('https://api.example/access_token?x=1')).toBe(false)
    expect(hasQueryAccessToken('https://api.example/orders?my_access_token=1')).toBe(false)
    expect(hasQueryAccessToken('https://api.example/orders#access_token=abc')).toBe(false)
    expect(hasQueryAccessToken('not a url ?access_token=1')).toBe(false)
  })
})
