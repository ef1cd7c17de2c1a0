import { SignJWT } from 'jose'
import { describe, expect, test } from 'vitest'
import { signJwt, verifyOwnAccessToken } from './jwt.ts'
import { generateSigningKey, loadKeySet } from './keys.ts'

describe('our own JWT access tokens (RFC 9068)', () => {
  test('RS256 signs and verifies', async () => {
    const keys = await loadKeySet([await generateSigningKey({ kid: 'rsa', alg: 'RS256' })])
    const token = await signJwt(keys, 'at+jwt', {
      iss: 'https://as.example.com',
      sub: 's',
      aud: 'a',
      jti: 'j',
      client_id: 'c',
      iat: 1,
      exp: 2,
    })
    const claims = await verifyOwnAccessToken(keys, 'https://as.example.com', token, 1000)
    expect(claims).toEqual({ jti: 'j', client_id: 'c', exp: 2 })
  })

  test('a JWT access token of another issuer, expired, or not at+jwt is not ours', async () => {
    const keys = await loadKeySet([await generateSigningKey({ kid: 'k' })])
    const claims = {
      iss: 'https://as.example.com',
      sub: 's',
      aud: 'a',
      jti: 'j',
      client_id: 'c',
      iat: 1,
      exp: 100,
    }
    const at = await signJwt(keys, 'at+jwt', claims)
    expect(await verifyOwnAccessToken(keys, 'https://other.example.com', at, 1000)).toBeUndefined()
    expect(await verifyOwnAccessToken(keys, 'https://as.example.com', at, 100_000)).toBeUndefined()
    const plain = await signJwt(keys, 'JWT', claims)
    expect(await verifyOwnAccessToken(keys, 'https://as.example.com', plain, 1000)).toBeUndefined()
    const other = await loadKeySet([await generateSigningKey({ kid: 'k' })])
    expect(await verifyOwnAccessToken(other, 'https://as.example.com', at, 1000)).toBeUndefined()
  })

  test('an unsigned token (alg none) is never ours', async () => {
    const keys = await loadKeySet([await generateSigningKey({ kid: 'k' })])
    const encode = (value: unknown) =>
      btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')
    const none = `${encode({ alg: 'none', typ: 'at+jwt', kid: 'k' })}.${encode({ iss: 'https://as.example.com', sub: 's', aud: 'a', jti: 'j', client_id: 'c', iat: 1, exp: 100 })}.`
    expect(await verifyOwnAccessToken(keys, 'https://as.example.com', none, 1000)).toBeUndefined()
  })

  test('HS256 signed with the public key as the secret (algorithm confusion) is never ours', async () => {
    const keys = await loadKeySet([await generateSigningKey({ kid: 'k' })])
    const secret = new TextEncoder().encode(JSON.stringify(keys.jwks.keys[0]))
    const forged = await new SignJWT({
      iss: 'https://as.example.com',
      sub: 's',
      aud: 'a',
      jti: 'j',
      client_id: 'c',
      iat: 1,
      exp: 100,
    })
      .setProtectedHeader({ alg: 'HS256', kid: 'k', typ: 'at+jwt' })
      .sign(secret)
    expect(await verifyOwnAccessToken(keys, 'https://as.example.com', forged, 1000)).toBeUndefined()
  })
})
