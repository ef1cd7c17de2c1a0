import { decodeJwt, decodeProtectedHeader } from 'jose'
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
  SPA_REDIRECT,
} from './kit.ts'

describe('the authorization code flow, in process', () => {
  test('authorize -> interaction -> code -> tokens with an ID token and a refresh token', async () => {
    const harness = await makeServer()
    const { code, redirect } = await obtainCode(harness)
    expect(redirect.origin + redirect.pathname).toBe(SPA_REDIRECT)
    expect(redirect.searchParams.get('state')).toBe('state-123')
    expect(redirect.searchParams.get('iss')).toBe(ISSUER)
    const response = await exchange(harness, code)
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const body = await json(response)
    expect(body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'openid profile email offline_access read:orders',
    })
    expect(body['access_token']).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/)
    expect(body['refresh_token']).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/)
    const idToken = body['id_token'] as string
    expect(decodeProtectedHeader(idToken)).toMatchObject({ alg: 'ES256', typ: 'JWT' })
    expect(decodeJwt(idToken)).toMatchObject({
      iss: ISSUER,
      sub: 'user-ada',
      aud: 'demo-spa',
      nonce: 'nonce-456',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      email_verified: true,
      auth_time: Math.floor(harness.clock.now / 1000),
    })
    const introspection = await harness.server.introspectToken(body['access_token'] as string)
    expect(introspection).toEqual({
      active: true,
      scope: 'openid profile email offline_access read:orders',
      client_id: 'demo-spa',
      username: 'ada',
      sub: 'user-ada',
      aud: ISSUER,
      iss: ISSUER,
      exp: Math.floor(harness.clock.now / 1000) + 900,
      iat: Math.floor(harness.clock.now / 1000),
      token_type: 'Bearer',
      jti: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      auth_time: Math.floor(harness.clock.now / 1000),
    })
  })

  test('client credentials', async () => {
    const harness = await makeServer()
    const response = await harness.server.token(
      post(
        '/token',
        { grant_type: 'client_credentials', scope: 'read:orders' },
        {
          authorization: basic('demo-backend', BACKEND_SECRET),
        },
      ),
    )
    expect(response.status).toBe(200)
    const body = await json(response)
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'read:orders', expires_in: 900 })
    expect(body).not.toHaveProperty('refresh_token')
    const introspection = await harness.server.introspectToken(body['access_token'] as string)
    expect(introspection).toMatchObject({
      active: true,
      sub: 'demo-backend',
      client_id: 'demo-backend',
    })
    expect(introspection).not.toHaveProperty('username')
  })
})
