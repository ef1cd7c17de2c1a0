import { describe, expect, test } from 'vitest'
import { BACKEND_SECRET, basic, exchange, json, makeServer, obtainCode, post } from '../test/kit.ts'
import { RFC7009_EXAMPLE } from '../test/vectors/rfc7009.ts'
import { hashClientSecret } from './clients.ts'

describe('POST /oauth/revoke (RFC 7009)', () => {
  test('the RFC 7009 §2.1 request: an unknown refresh token MUST still answer 200 (§2.2)', async () => {
    const { server } = await makeServer({
      clients: [
        {
          id: RFC7009_EXAMPLE.clientId,
          secretHashes: [await hashClientSecret(RFC7009_EXAMPLE.clientSecret)],
          grantTypes: ['client_credentials'],
          scopes: ['read:orders'],
        },
      ],
    })
    const response = await server.revoke(
      post('/oauth/revoke', RFC7009_EXAMPLE.body, { authorization: RFC7009_EXAMPLE.authorization }),
    )
    expect(response.status).toBe(RFC7009_EXAMPLE.status)
    expect(await response.text()).toBe('')
  })

  test('a refresh token MUST revoke its whole family: the access token too (RFC 7009 §2.1)', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const tokens = await json(await exchange(harness, code))
    const response = await harness.server.revoke(
      post('/oauth/revoke', { token: tokens['refresh_token'] as string, client_id: 'demo-spa' }),
    )
    expect(response.status).toBe(200)
    expect(await harness.server.introspectToken(tokens['access_token'] as string)).toEqual({
      active: false,
    })
    const refresh = await harness.server.token(
      post('/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens['refresh_token'] as string,
        client_id: 'demo-spa',
      }),
    )
    expect(await json(refresh)).toMatchObject({ error: 'invalid_grant' })
    expect(harness.events).toContainEqual(
      expect.objectContaining({ type: 'token_revoked', clientId: 'demo-spa' }),
    )
  })

  test('an access token revokes itself only: the refresh token still works', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const tokens = await json(await exchange(harness, code))
    await harness.server.revoke(
      post('/oauth/revoke', { token: tokens['access_token'] as string, client_id: 'demo-spa' }),
    )
    expect(await harness.server.introspectToken(tokens['access_token'] as string)).toEqual({
      active: false,
    })
    const refresh = await harness.server.token(
      post('/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens['refresh_token'] as string,
        client_id: 'demo-spa',
      }),
    )
    expect(refresh.status).toBe(200)
  })

  test("another client's token: 200, and nothing is revoked", async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const tokens = await json(await exchange(harness, code))
    const response = await harness.server.revoke(
      post(
        '/oauth/revoke',
        { token: tokens['access_token'] as string },
        { authorization: basic('demo-backend', BACKEND_SECRET) },
      ),
    )
    expect(response.status).toBe(200)
    expect(await harness.server.introspectToken(tokens['access_token'] as string)).toMatchObject({
      active: true,
    })
  })

  test('an unauthenticated caller is refused with 401 invalid_client', async () => {
    const harness = await makeServer()
    const response = await harness.server.revoke(
      post('/oauth/revoke', { token: 'x' }, { authorization: basic('demo-backend', 'wrong') }),
    )
    expect(response.status).toBe(401)
    expect(await json(response)).toMatchObject({ error: 'invalid_client' })
  })
})
