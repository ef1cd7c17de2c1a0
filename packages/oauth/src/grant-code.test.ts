import { describe, expect, test } from 'vitest'
import {
  BACKEND_REDIRECT,
  BACKEND_SECRET,
  basic,
  exchange,
  json,
  makeServer,
  obtainCode,
  post,
  VERIFIER,
} from '../test/kit.ts'

describe('the authorization code grant', () => {
  test('a confidential client exchanges its code with client_secret_basic', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness, {
      client_id: 'demo-backend',
      redirect_uri: BACKEND_REDIRECT,
      scope: 'openid offline_access read:orders',
    })
    const response = await harness.server.token(
      post(
        '/token',
        {
          grant_type: 'authorization_code',
          code,
          redirect_uri: BACKEND_REDIRECT,
          code_verifier: VERIFIER,
        },
        {
          authorization: basic('demo-backend', BACKEND_SECRET),
        },
      ),
    )
    expect(response.status).toBe(200)
    const body = await json(response)
    expect(body).toHaveProperty('refresh_token')
    expect(body).toHaveProperty('id_token')
    expect(harness.events).toContainEqual(
      expect.objectContaining({
        type: 'token_issued',
        grantType: 'authorization_code',
        clientId: 'demo-backend',
        subject: 'user-ada',
      }),
    )
  })

  test('a confidential client MUST authenticate to exchange its code: the code is left unspent', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness, {
      client_id: 'demo-backend',
      redirect_uri: BACKEND_REDIRECT,
      scope: 'read:orders',
      nonce: undefined,
    })
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: BACKEND_REDIRECT,
      code_verifier: VERIFIER,
    }
    const anonymous = await harness.server.token(
      post('/token', { ...form, client_id: 'demo-backend' }),
    )
    expect(anonymous.status).toBe(401)
    const authenticated = await harness.server.token(
      post('/token', form, { authorization: basic('demo-backend', BACKEND_SECRET) }),
    )
    expect(authenticated.status).toBe(200)
  })

  test('offline_access without the refresh_token grant: no refresh token', async () => {
    const harness = await makeServer({
      clients: [
        {
          id: 'demo-spa',
          public: true,
          redirectUris: ['http://127.0.0.1:5173/callback'],
          grantTypes: ['authorization_code'],
          scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders'],
        },
      ],
    })
    const { code } = await obtainCode(harness)
    const body = await json(await exchange(harness, code))
    expect(body).not.toHaveProperty('refresh_token')
    expect(body['expires_in']).toBe(900)
  })

  test('a malformed code is invalid_grant; one over 128 characters invalid_request', async () => {
    const harness = await makeServer()
    expect(await json(await exchange(harness, 'not-a-code'))).toMatchObject({
      error: 'invalid_grant',
    })
    expect(await json(await exchange(harness, 'x'.repeat(129)))).toMatchObject({
      error: 'invalid_request',
    })
  })
})
