import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose'
import { describe, expect, test } from 'vitest'
import {
  BACKEND_SECRET,
  basic,
  exchange,
  ISSUER,
  json,
  makeServer,
  obtainCode,
  post,
} from '../test/kit.ts'
import { generateSigningKey } from './keys.ts'

const API = 'https://api.example.com/'
const JWT_API = 'https://jwt-api.example.com/'

async function jwtServer(alg: 'ES256' | 'RS256' = 'ES256') {
  return makeServer({
    resources: [
      { identifier: API },
      { identifier: JWT_API, accessTokenFormat: 'jwt', accessTokenTtlSeconds: 600 },
    ],
    signingKeys: [await generateSigningKey({ alg, kid: `${alg}-key` })],
  })
}

async function jwks(harness: Awaited<ReturnType<typeof makeServer>>) {
  const response = await harness.server.jwks(new Request(`${ISSUER}/.well-known/jwks.json`))
  return createLocalJWKSet((await response.json()) as never)
}

describe('JWT access tokens (RFC 9068), chosen per resource', () => {
  test.each(['ES256', 'RS256'] as const)(
    'code flow: a %s at+jwt the resource verifies with the JWKS',
    async (alg) => {
      const harness = await jwtServer(alg)
      const { code } = await obtainCode(harness, { resource: JWT_API })
      const tokens = await json(await exchange(harness, code))
      const token = tokens['access_token'] as string
      expect(tokens['expires_in']).toBe(600)
      const { payload, protectedHeader } = await jwtVerify(token, await jwks(harness), {
        issuer: ISSUER,
        audience: JWT_API,
        typ: 'at+jwt',
        algorithms: [alg],
        currentDate: new Date(harness.clock.now),
      })
      expect(protectedHeader).toEqual({ alg, kid: `${alg}-key`, typ: 'at+jwt' })
      expect(payload).toEqual({
        iss: ISSUER,
        sub: 'user-ada',
        aud: JWT_API,
        exp: Math.floor(harness.clock.now / 1000) + 600,
        iat: Math.floor(harness.clock.now / 1000),
        jti: expect.any(String),
        client_id: 'demo-spa',
        scope: 'openid profile email offline_access read:orders',
        auth_time: Math.floor(harness.clock.now / 1000),
      })
      // RFC 9068 access tokens are introspected and revoked like opaque ones.
      expect(await harness.server.introspectToken(token)).toMatchObject({
        active: true,
        aud: JWT_API,
        jti: payload.jti,
      })
      await harness.server.revoke(post('/oauth/revoke', { token, client_id: 'demo-spa' }))
      expect(await harness.server.introspectToken(token)).toEqual({ active: false })
      // The refresh token still works, and its new access token is a JWT for the same resource.
      const refreshed = await json(
        await harness.server.token(
          post('/token', {
            grant_type: 'refresh_token',
            refresh_token: tokens['refresh_token'] as string,
            client_id: 'demo-spa',
          }),
        ),
      )
      expect(decodeJwt(refreshed['access_token'] as string)).toMatchObject({ aud: JWT_API })
    },
  )

  test('client credentials: sub is the client id (RFC 9068 §2.2); the default resource stays opaque', async () => {
    const harness = await jwtServer()
    const auth = { authorization: basic('demo-backend', BACKEND_SECRET) }
    const jwt = await json(
      await harness.server.token(
        post('/token', { grant_type: 'client_credentials', resource: JWT_API }, auth),
      ),
    )
    expect(decodeJwt(jwt['access_token'] as string)).toMatchObject({
      sub: 'demo-backend',
      client_id: 'demo-backend',
      aud: JWT_API,
    })
    const opaque = await json(
      await harness.server.token(post('/token', { grant_type: 'client_credentials' }, auth)),
    )
    expect(opaque['access_token']).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/)
    expect(await harness.server.introspectToken(opaque['access_token'] as string)).toMatchObject({
      aud: API,
    })
  })

  test('a JWT signed by another key, or expired, is inactive', async () => {
    const harness = await jwtServer()
    const other = await jwtServer()
    const { code } = await obtainCode(other, { resource: JWT_API })
    const foreign = (await json(await exchange(other, code)))['access_token'] as string
    expect(await harness.server.introspectToken(foreign)).toEqual({ active: false })
    other.clock.advance(600_000)
    expect(await other.server.introspectToken(foreign)).toEqual({ active: false })
  })
})

describe('ID tokens (OpenID Connect Core §2)', () => {
  test('claims released by scope only: no profile, no name', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness, { scope: 'openid email' })
    const idToken = (await json(await exchange(harness, code)))['id_token'] as string
    const claims = decodeJwt(idToken)
    expect(claims).toMatchObject({
      email: 'ada@example.com',
      email_verified: true,
      nonce: 'nonce-456',
      aud: 'demo-spa',
    })
    expect(claims).not.toHaveProperty('name')
    expect(claims['exp']).toBe(Math.floor(harness.clock.now / 1000) + 3600)
    expect(decodeProtectedHeader(idToken)).toMatchObject({ typ: 'JWT', alg: 'ES256' })
  })

  test('no openid, no ID token', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness, { scope: 'read:orders', nonce: undefined })
    expect(await json(await exchange(harness, code))).not.toHaveProperty('id_token')
  })

  test('only the approved scopes are bound: the user approved less than asked', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness, {}, ['openid', 'read:orders'])
    const tokens = await json(await exchange(harness, code))
    expect(tokens['scope']).toBe('openid read:orders')
    expect(tokens).not.toHaveProperty('refresh_token')
    expect(decodeJwt(tokens['id_token'] as string)).not.toHaveProperty('email')
  })
})
