import { createLocalJWKSet, jwtVerify } from 'jose'
import { describe, expect, test } from 'vitest'
import { signJwt } from './jwt.ts'
import { checkSigningKeys, generateSigningKey, loadKeySet } from './keys.ts'

describe('signing keys', () => {
  test('generateSigningKey: ES256 by default, a private JWK with kid and alg', async () => {
    const key = await generateSigningKey({ kid: 'k1' })
    expect(key).toMatchObject({
      kid: 'k1',
      alg: 'ES256',
      privateJwk: { kty: 'EC', crv: 'P-256', kid: 'k1', alg: 'ES256' },
    })
    expect(typeof key.privateJwk.d).toBe('string')
  })

  test('the JWKS holds the public parts only (no d, p, q, dp, dq, qi), with kid, alg and use', async () => {
    const keys = await loadKeySet([
      await generateSigningKey({ kid: 'ec' }),
      await generateSigningKey({ kid: 'rsa', alg: 'RS256' }),
    ])
    expect(keys.jwks.keys).toHaveLength(2)
    for (const jwk of keys.jwks.keys) {
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwk).not.toHaveProperty(member)
      expect(jwk.use).toBe('sig')
    }
    expect(Object.keys(keys.jwks.keys[0]!).sort()).toEqual([
      'alg',
      'crv',
      'kid',
      'kty',
      'use',
      'x',
      'y',
    ])
    expect(Object.keys(keys.jwks.keys[1]!).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
    expect(keys.algorithms).toEqual(['ES256', 'RS256'])
  })

  test('rotation: the first key signs, every key of the JWKS verifies', async () => {
    const first = await loadKeySet([
      await generateSigningKey({ kid: 'new' }),
      await generateSigningKey({ kid: 'old' }),
    ])
    const token = await signJwt(first, 'JWT', { sub: 'x' })
    const { protectedHeader } = await jwtVerify(
      token,
      createLocalJWKSet({ keys: [...first.jwks.keys] as never }),
    )
    expect(protectedHeader).toMatchObject({ kid: 'new', alg: 'ES256', typ: 'JWT' })
  })

  test.each([
    ['no key', []],
    ['a kid used twice', 'twice'],
    ['a public key', 'public'],
    ['an EC key for RS256', 'mismatch'],
    ['an unknown algorithm', 'alg'],
  ])('checkSigningKeys refuses %s', async (_name, kind) => {
    const key = await generateSigningKey({ kid: 'k' })
    const { d: _d, ...publicJwk } = key.privateJwk
    const cases: Record<string, unknown[]> = {
      twice: [key, key],
      public: [{ ...key, privateJwk: publicJwk }],
      mismatch: [{ ...key, alg: 'RS256' }],
      alg: [{ ...key, alg: 'HS256' }],
    }
    expect(() =>
      checkSigningKeys((Array.isArray(kind) ? kind : cases[kind as string]) as never),
    ).toThrow(TypeError)
  })
})
