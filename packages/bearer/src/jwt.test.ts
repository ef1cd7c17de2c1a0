import { exportSPKI, importJWK, SignJWT } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { refusal } from '../test/refusal.ts'
import example from '../test/rfc9068-example.json' with { type: 'json' }
import type { TestKey } from '../test/tokens.ts'
import {
  AUDIENCE,
  claims,
  hmacWithPublicKey,
  ISSUER,
  makeKey,
  NOW,
  NOW_SECONDS,
  sign,
  unsecured,
} from '../test/tokens.ts'
import type { BearerError } from './error.ts'
import type { BearerOptions, JwtVerificationOptions } from './options.ts'
import { createTokenVerifier } from './verifier.ts'

let key: TestKey
let otherKey: TestKey

beforeAll(async () => {
  key = await makeKey('key-1')
  otherKey = await makeKey('key-1')
})

function verifier(jwt: Partial<JwtVerificationOptions> = {}, clock = () => NOW) {
  return createTokenVerifier({
    jwt: { issuer: ISSUER, audience: AUDIENCE, keys: [key.publicJwk], ...jwt },
    clock,
  })
}

describe('RFC 9068 §2.2 example', () => {
  let rsaKey: TestKey
  beforeAll(async () => {
    rsaKey = await makeKey(example.header.kid, 'RS256')
  })

  function exampleVerifier(clock: () => number) {
    return createTokenVerifier({
      jwt: {
        issuer: example.claims.iss,
        audience: example.claims.aud,
        keys: [rsaKey.publicJwk],
        // RFC 9068 §2.1: RS256 must be supported, so it can be configured.
        algorithms: ['RS256'],
      },
      clock,
    })
  }

  it('accepts the example claims and header (typ at+JWT, case-insensitive) while valid', async () => {
    const token = await sign(rsaKey, example.claims, example.header)
    const principal = await exampleVerifier(() => (example.claims.iat + 60) * 1000).verify(token)
    expect(principal).toEqual({
      subject: '5ba552d67',
      clientId: 's6BhdRkqt3',
      scopes: ['openid', 'profile', 'reademail'],
      claims: example.claims,
      tokenId: 'dbe39bf3a3ba4238a513f51d6e1691c4',
    })
  })

  it('MUST refuse the example once expired', async () => {
    const token = await sign(rsaKey, example.claims, example.header)
    const error = await refusal(exampleVerifier(() => NOW).verify(token))
    expect(error.code).toBe('TOKEN_EXPIRED')
    expect(error.challengeError).toBe('invalid_token')
  })
})

describe('JWT access tokens', () => {
  it('answers the principal: subject, client, scopes, claims and token id', async () => {
    const principal = await verifier().verify(await sign(key))
    expect(principal.subject).toBe('user-1')
    expect(principal.clientId).toBe('app')
    expect(principal.scopes).toEqual(['read:orders', 'write:orders'])
    expect(principal.tokenId).toBe('jti-1')
    expect(principal.claims['iss']).toBe(ISSUER)
    expect(principal.confirmation).toBeUndefined()
  })

  it('hands out a deep-frozen principal, nested claims included', async () => {
    const token = await sign(key, claims({ roles: { admin: ['a'] } }))
    const principal = await verifier().verify(token)
    const roles = principal.claims['roles'] as { admin: string[] }
    expect(Object.isFrozen(principal)).toBe(true)
    expect(Object.isFrozen(principal.claims)).toBe(true)
    expect(Object.isFrozen(roles)).toBe(true)
    expect(Object.isFrozen(roles.admin)).toBe(true)
    // Each verification parses its own payload: one principal's claims are not another's.
    const again = await verifier().verify(token)
    expect(again.claims['roles']).not.toBe(roles)
    expect(again.claims['roles']).toEqual({ admin: ['a'] })
  })

  it('has no subject for client credentials, whose sub is the client id (RFC 9068 §2.2)', async () => {
    const token = await sign(key, claims({ sub: 'app', scope: undefined }))
    const principal = await verifier().verify(token)
    expect(principal.subject).toBeUndefined()
    expect(principal.clientId).toBe('app')
    expect(principal.scopes).toEqual([])
  })

  it('accepts typ application/at+jwt (RFC 9068 §4) and an audience list containing ours', async () => {
    const token = await sign(key, claims({ aud: ['https://other.example', AUDIENCE] }), {
      typ: 'application/at+jwt',
    })
    await expect(verifier().verify(token)).resolves.toMatchObject({ subject: 'user-1' })
  })

  it('SHOULD allow the clock tolerance on exp and nbf (default 30 s)', async () => {
    const late = await sign(key, claims({ exp: NOW_SECONDS - 20 }))
    await expect(verifier().verify(late)).resolves.toMatchObject({ subject: 'user-1' })
    const early = await sign(key, claims({ nbf: NOW_SECONDS + 20 }))
    await expect(verifier().verify(early)).resolves.toMatchObject({ subject: 'user-1' })
    const tight = verifier({ clockToleranceSeconds: 0 })
    expect((await refusal(tight.verify(late))).code).toBe('TOKEN_EXPIRED')
  })

  it('accepts a token without kid when several static keys match, trying each', async () => {
    const next = await makeKey('key-2')
    const both = verifier({ keys: [key.publicJwk, next.publicJwk] })
    const token = await sign(next, claims(), { kid: undefined })
    await expect(both.verify(token)).resolves.toMatchObject({ subject: 'user-1' })
  })

  it('accepts a token signed by any key of a rotation list', async () => {
    const next = await makeKey('key-2')
    const both = verifier({ keys: [key.publicJwk, next.publicJwk] })
    await expect(both.verify(await sign(next))).resolves.toMatchObject({ subject: 'user-1' })
    await expect(both.verify(await sign(key))).resolves.toMatchObject({ subject: 'user-1' })
  })
})

// RFC 9700 §4 / RFC 8725 / RFC 9068 §4: each token is refused with invalid_token.
const attacks: [string, () => Promise<string>, BearerError['code'], string][] = [
  ['alg none (RFC 9068 §4 MUST reject)', async () => unsecured(), 'TOKEN_INVALID', 'algorithm'],
  [
    'HS256 signed with the public JWK as the secret (RFC 8725 §2.1)',
    () => hmacWithPublicKey(key, JSON.stringify(key.publicJwk)),
    'TOKEN_INVALID',
    'algorithm',
  ],
  [
    'HS256 signed with the public key PEM as the secret (RFC 8725 §2.1)',
    async () => hmacWithPublicKey(key, await exportSPKI(await publicKeyOf(key))),
    'TOKEN_INVALID',
    'algorithm',
  ],
  [
    'typ JWT (RFC 9068 §4 MUST reject)',
    () => sign(key, claims(), { typ: 'JWT' }),
    'TOKEN_INVALID',
    'type',
  ],
  ['no typ', () => sign(key, claims(), { typ: undefined }), 'TOKEN_INVALID', 'type'],
  ['an ID token typ', () => sign(key, claims(), { typ: 'id_token+jwt' }), 'TOKEN_INVALID', 'type'],
  ['wrong iss', () => sign(key, claims({ iss: 'https://evil.example' })), 'TOKEN_INVALID', 'iss'],
  [
    'iss with a trailing slash',
    () => sign(key, claims({ iss: `${ISSUER}/` })),
    'TOKEN_INVALID',
    'iss',
  ],
  [
    'wrong aud (RFC 9068 §4 MUST reject)',
    () => sign(key, claims({ aud: 'https://other.example' })),
    'TOKEN_INVALID',
    'aud',
  ],
  [
    'expired beyond the tolerance',
    () => sign(key, claims({ exp: NOW_SECONDS - 31 })),
    'TOKEN_EXPIRED',
    'expired',
  ],
  [
    'nbf in the future beyond the tolerance',
    () => sign(key, claims({ nbf: NOW_SECONDS + 31 })),
    'TOKEN_INVALID',
    'not valid yet',
  ],
  [
    'iat in the future beyond the tolerance',
    () => sign(key, claims({ iat: NOW_SECONDS + 31 })),
    'TOKEN_INVALID',
    'future',
  ],
  [
    'missing jti (RFC 9068 §2.2 REQUIRED)',
    () => sign(key, claims({ jti: undefined })),
    'TOKEN_INVALID',
    'jti',
  ],
  [
    'missing client_id (RFC 9068 §2.2 REQUIRED)',
    () => sign(key, claims({ client_id: undefined })),
    'TOKEN_INVALID',
    'client_id',
  ],
  [
    'missing sub (RFC 9068 §2.2 REQUIRED)',
    () => sign(key, claims({ sub: undefined })),
    'TOKEN_INVALID',
    'sub',
  ],
  [
    'missing iat (RFC 9068 §2.2 REQUIRED)',
    () => sign(key, claims({ iat: undefined })),
    'TOKEN_INVALID',
    'iat',
  ],
  [
    'missing exp (RFC 9068 §2.2 REQUIRED)',
    () => sign(key, claims({ exp: undefined })),
    'TOKEN_INVALID',
    'exp',
  ],
  [
    'missing aud (RFC 9068 §2.2 REQUIRED)',
    () => sign(key, claims({ aud: undefined })),
    'TOKEN_INVALID',
    'aud',
  ],
  [
    'missing iss (RFC 9068 §2.2 REQUIRED)',
    () => sign(key, claims({ iss: undefined })),
    'TOKEN_INVALID',
    'iss',
  ],
  [
    'client_id not a string',
    () => sign(key, claims({ client_id: 42 })),
    'TOKEN_INVALID',
    'client_id',
  ],
  [
    'scope not a string',
    () => sign(key, claims({ scope: ['read:orders'] })),
    'TOKEN_INVALID',
    'scope',
  ],
  [
    'a cnf claim (sender-constrained, RFC 9449 §7.1)',
    () => sign(key, claims({ cnf: { jkt: 'abc' } })),
    'TOKEN_INVALID',
    'bound',
  ],
  ['unknown kid', () => sign({ ...otherKey, kid: 'key-9' }), 'TOKEN_INVALID', 'unknown key'],
  ['right kid, another key', () => sign(otherKey), 'TOKEN_INVALID', 'signature'],
  [
    'a tampered payload',
    async () => {
      const [header, , signature] = (await sign(key)).split('.')
      const payload = Buffer.from(JSON.stringify(claims({ scope: 'admin:all' }))).toString(
        'base64url',
      )
      return `${header}.${payload}.${signature}`
    },
    'TOKEN_INVALID',
    'signature',
  ],
  [
    'a crit header the verifier does not understand (RFC 7515 §4.1.11)',
    () =>
      new SignJWT(claims())
        .setProtectedHeader({
          alg: 'ES256',
          kid: key.kid,
          typ: 'at+jwt',
          crit: ['x-bind'],
          'x-bind': 1,
        })
        .sign(key.privateKey, { crit: { 'x-bind': true } }),
    'TOKEN_INVALID',
    'malformed',
  ],
  ['not a JWT', async () => 'abc.def.ghi', 'TOKEN_INVALID', 'malformed'],
]

async function publicKeyOf(testKey: TestKey): Promise<CryptoKey> {
  return (await importJWK(testKey.publicJwk, testKey.alg, { extractable: true })) as CryptoKey
}

describe('attack table: every token MUST be refused', () => {
  it.each(attacks)('%s', async (_name, make, code, description) => {
    const error = await refusal(verifier().verify(await make()))
    expect(error.code).toBe(code)
    expect(error.status).toBe(401)
    expect(error.challengeError).toBe('invalid_token')
    expect(error.message).toContain(description)
  })

  it('MUST refuse an ES256 token when only RS256 is pinned', async () => {
    const rsa = await makeKey('rsa', 'RS256')
    const pinned = verifier({ keys: [key.publicJwk, rsa.publicJwk], algorithms: ['RS256'] })
    const error = await refusal(pinned.verify(await sign(key)))
    expect(error.message).toContain('algorithm')
    await expect(pinned.verify(await sign(rsa))).resolves.toMatchObject({ subject: 'user-1' })
  })
})

describe('configuration MUST refuse what could accept forged tokens', () => {
  const jwt = (): JwtVerificationOptions => ({
    issuer: ISSUER,
    audience: AUDIENCE,
    keys: [key.publicJwk],
  })
  const bad: [string, () => BearerOptions, ErrorConstructor][] = [
    ['alg none', () => ({ jwt: { ...jwt(), algorithms: ['none'] } }), RangeError],
    ['HS256', () => ({ jwt: { ...jwt(), algorithms: ['ES256', 'HS256'] } }), RangeError],
    ['HS512', () => ({ jwt: { ...jwt(), algorithms: ['HS512'] } }), RangeError],
    ['an unknown algorithm', () => ({ jwt: { ...jwt(), algorithms: ['ES257'] } }), RangeError],
    ['no algorithm', () => ({ jwt: { ...jwt(), algorithms: [] } }), RangeError],
    [
      'a symmetric key',
      () => ({ jwt: { ...jwt(), keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }),
      TypeError,
    ],
    [
      'a private key',
      () => ({ jwt: { ...jwt(), keys: [{ ...key.publicJwk, d: 'AAAA' }] } }),
      TypeError,
    ],
    [
      'an EC key without y',
      () => ({ jwt: { ...jwt(), keys: [{ kty: 'EC', crv: 'P-256', x: 'AAAA' }] } }),
      TypeError,
    ],
    ['a key of an unknown kty', () => ({ jwt: { ...jwt(), keys: [{ kty: 'XYZ' }] } }), TypeError],
    ['no key source', () => ({ jwt: { issuer: ISSUER, audience: AUDIENCE } }), TypeError],
    [
      'both keys and jwksUrl',
      () => ({ jwt: { ...jwt(), jwksUrl: 'https://auth.example.com/jwks' } }),
      TypeError,
    ],
    ['an empty key list', () => ({ jwt: { ...jwt(), keys: [] } }), TypeError],
    ['no issuer', () => ({ jwt: { ...jwt(), issuer: '' } }), TypeError],
    ['no audience', () => ({ jwt: { ...jwt(), audience: [] } }), TypeError],
    [
      'a file: JWKS URL',
      () => ({ jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: 'file:///etc/jwks' } }),
      TypeError,
    ],
    [
      'a huge clock tolerance',
      () => ({ jwt: { ...jwt(), clockToleranceSeconds: 3600 } }),
      RangeError,
    ],
    ['a typ other than at+jwt', () => ({ jwt: { ...jwt(), typ: 'JWT' as 'at+jwt' } }), TypeError],
    [
      'an http: JWKS URL on a host that is not loopback',
      () => ({
        jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: 'http://auth.example.com/jwks' },
      }),
      TypeError,
    ],
    [
      'a JWKS timeout of 0',
      () => ({
        jwt: {
          issuer: ISSUER,
          audience: AUDIENCE,
          jwksUrl: 'https://a.example/j',
          jwksTimeoutMs: 0,
        },
      }),
      RangeError,
    ],
    [
      'a JWKS cooldown under 1000 ms',
      () => ({
        jwt: {
          issuer: ISSUER,
          audience: AUDIENCE,
          jwksUrl: 'https://a.example/j',
          jwksCooldownMs: 999,
        },
      }),
      RangeError,
    ],
    ['neither jwt nor introspection', () => ({}), TypeError],
  ]
  it.each(bad)('refuses %s at construction', (_name, options, type) => {
    expect(() => createTokenVerifier(options())).toThrow(type)
  })

  it('accepts typ application/at+jwt, an http: JWKS URL on loopback, and elsewhere with allowInsecureHttp', () => {
    const base = { issuer: ISSUER, audience: AUDIENCE }
    for (const jwks of [
      { jwksUrl: 'http://127.0.0.1:8080/jwks' },
      { jwksUrl: 'http://localhost/jwks' },
      { jwksUrl: 'http://[::1]/jwks' },
      { jwksUrl: 'http://auth.internal/jwks', allowInsecureHttp: true },
    ]) {
      expect(() => createTokenVerifier({ jwt: { ...base, ...jwks } })).not.toThrow()
    }
    const typ = { ...jwt(), typ: 'application/at+jwt' as const }
    expect(() => createTokenVerifier({ jwt: typ })).not.toThrow()
  })
})
