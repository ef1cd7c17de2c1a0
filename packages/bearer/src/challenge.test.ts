import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { bearerChallenge, formatBearerChallenge, isScopeToken } from './challenge.ts'
import { BearerError } from './error.ts'

const budget = { interruptAfterTimeLimit: 2000 }

// The auth-params of a challenge, unescaped (RFC 9110 §11.2, §5.6.4): enough of a parser to
// check that what was written reads back the same.
function parseParams(value: string): Record<string, string> {
  expect(value.startsWith('Bearer')).toBe(true)
  const params: Record<string, string> = {}
  const pattern = /([a-z_]+)="((?:[^"\\]|\\.)*)"(?:, |$)/gy
  pattern.lastIndex = value === 'Bearer' ? 6 : 7
  let match: RegExpExecArray | null = pattern.exec(value)
  let end = pattern.lastIndex
  while (match !== null) {
    params[match[1]!] = match[2]!.replace(/\\(.)/g, '$1')
    end = pattern.lastIndex
    match = pattern.exec(value)
  }
  expect(end).toBe(value.length)
  return params
}

describe('formatBearerChallenge (RFC 6750 §3)', () => {
  it('writes the RFC 6750 §3 examples', () => {
    expect(formatBearerChallenge({ realm: 'example' })).toBe('Bearer realm="example"')
    expect(
      formatBearerChallenge({
        realm: 'example',
        error: 'invalid_token',
        errorDescription: 'The access token expired',
      }),
    ).toBe(
      'Bearer realm="example", error="invalid_token", error_description="The access token expired"',
    )
    expect(formatBearerChallenge({})).toBe('Bearer')
  })

  it('writes the scopes needed, space-separated, for insufficient_scope', () => {
    expect(
      formatBearerChallenge({ realm: 'api', error: 'insufficient_scope', scope: ['a:b', 'c:d'] }),
    ).toBe('Bearer realm="api", error="insufficient_scope", scope="a:b c:d"')
  })

  it('escapes quotes and backslashes in the realm (RFC 9110 §5.6.4)', () => {
    const value = formatBearerChallenge({ realm: 'a "b" \\c' })
    expect(value).toBe('Bearer realm="a \\"b\\" \\\\c"')
    expect(parseParams(value)).toEqual({ realm: 'a "b" \\c' })
  })

  it('refuses a realm that cannot be quoted and a scope that is no scope token', () => {
    expect(() => formatBearerChallenge({ realm: 'a\nb' })).toThrow(RangeError)
    expect(() => formatBearerChallenge({ realm: 'é' })).toThrow(RangeError)
    expect(() => formatBearerChallenge({ scope: ['a b'] })).toThrow(RangeError)
    expect(() => formatBearerChallenge({ scope: ['a"b'] })).toThrow(RangeError)
  })

  it('MUST keep error_description within %x20-21 / %x23-5B / %x5D-7E (RFC 6750 §3)', () => {
    const value = formatBearerChallenge({
      error: 'invalid_token',
      errorDescription: 'The "aud" claim\\ is wrong\r\nX-Injected: 1 é',
    })
    const params = parseParams(value)
    expect(params['error_description']).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/)
    expect(params['error_description']).toBe("The 'aud' claim/ is wrong??X-Injected: 1 ?")
  })

  it('always yields a valid field that reads back its realm and parameters (property)', () => {
    const ascii = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
      maxLength: 60,
    })
    fc.assert(
      fc.property(ascii, fc.string({ unit: 'binary', maxLength: 60 }), (realm, description) => {
        const value = formatBearerChallenge({
          realm,
          error: 'invalid_token',
          errorDescription: description,
        })
        // A Headers object accepts it (no control character, no code point over 0xFF).
        expect(new Headers({ 'www-authenticate': value }).get('www-authenticate')).toBe(value)
        const params = parseParams(value)
        expect(params['realm']).toBe(realm)
        expect(params['error']).toBe('invalid_token')
        expect(params['error_description']).toHaveLength(description.length)
      }),
      budget,
    )
  })
})

describe('bearerChallenge', () => {
  it('MUST NOT include an error when the request carried no token (RFC 6750 §3.1)', () => {
    const error = new BearerError('TOKEN_MISSING', 'No token.')
    expect(bearerChallenge(error, 'api')).toBe('Bearer realm="api"')
  })

  it('gives invalid_request, invalid_token and insufficient_scope with their descriptions', () => {
    expect(bearerChallenge(new BearerError('TOKEN_MALFORMED', 'Bad.'), 'api')).toBe(
      'Bearer realm="api", error="invalid_request", error_description="Bad."',
    )
    expect(bearerChallenge(new BearerError('TOKEN_EXPIRED', 'Expired.'), 'api')).toBe(
      'Bearer realm="api", error="invalid_token", error_description="Expired."',
    )
    const scope = new BearerError('INSUFFICIENT_SCOPE', 'Lacks.', {
      requiredScopes: ['read:orders', 'write:orders'],
    })
    expect(bearerChallenge(scope, 'api')).toBe(
      'Bearer realm="api", error="insufficient_scope", error_description="Lacks.", scope="read:orders write:orders"',
    )
  })

  it('gives no challenge for a 503', () => {
    expect(bearerChallenge(new BearerError('JWKS_UNAVAILABLE', 'Down.'), 'api')).toBeUndefined()
    expect(
      bearerChallenge(new BearerError('INTROSPECTION_UNAVAILABLE', 'Down.'), 'api'),
    ).toBeUndefined()
  })
})

describe('isScopeToken (RFC 6749 §3.3)', () => {
  it('accepts scope tokens and refuses spaces, quotes, backslashes and empty strings', () => {
    expect(isScopeToken('read:orders')).toBe(true)
    expect(isScopeToken('openid')).toBe(true)
    for (const bad of ['', 'a b', 'a"b', 'a\\b', 'é']) expect(isScopeToken(bad)).toBe(false)
  })
})
