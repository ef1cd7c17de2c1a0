import { describe, expect, test } from 'vitest'
import { BACKEND_SECRET, basic, json, makeServer, post } from '../test/kit.ts'
import { hashClientSecret } from './clients.ts'

const auth = { authorization: basic('demo-backend', BACKEND_SECRET) }

describe('the client credentials grant (RFC 6749 §4.4)', () => {
  test('without scope: the client API scopes, no OpenID ones', async () => {
    const { server } = await makeServer()
    const body = await json(
      await server.token(post('/token', { grant_type: 'client_credentials' }, auth)),
    )
    expect(body['scope']).toBe('read:orders write:orders manage:webhooks')
    expect(body).not.toHaveProperty('refresh_token')
    expect(body).not.toHaveProperty('id_token')
  })

  test('client_secret_post works too', async () => {
    const { server } = await makeServer()
    const response = await server.token(
      post('/token', {
        grant_type: 'client_credentials',
        client_id: 'demo-backend',
        client_secret: BACKEND_SECRET,
      }),
    )
    expect(response.status).toBe(200)
  })

  test.each([
    ['openid', 'invalid_scope'],
    ['offline_access read:orders', 'invalid_scope'],
    ['read:payments', 'invalid_scope'],
  ])('scope %s is refused with %s', async (scope, error) => {
    const { server } = await makeServer()
    const response = await server.token(
      post('/token', { grant_type: 'client_credentials', scope }, auth),
    )
    expect(await json(response)).toMatchObject({ error })
  })

  test('a public client MUST NOT use client credentials: it cannot authenticate', async () => {
    const { server } = await makeServer()
    const response = await server.token(
      post('/token', { grant_type: 'client_credentials', client_id: 'demo-spa' }),
    )
    expect(response.status).toBe(401)
    expect(await json(response)).toMatchObject({ error: 'invalid_client' })
  })

  test('a client without the grant MUST be refused with unauthorized_client', async () => {
    const { server } = await makeServer({
      clients: [
        {
          id: 'cc-only',
          secretHashes: [await hashClientSecret('cc-secret')],
          grantTypes: ['client_credentials'],
          scopes: ['read:orders'],
        },
      ],
    })
    const response = await server.token(
      post(
        '/token',
        { grant_type: 'refresh_token', refresh_token: 'x' },
        { authorization: basic('cc-only', 'cc-secret') },
      ),
    )
    expect(response.status).toBe(400)
    expect(await json(response)).toMatchObject({ error: 'unauthorized_client' })
  })

  test('each request is its own grant: revoking one token leaves the other', async () => {
    const { server } = await makeServer()
    const a = (
      await json(await server.token(post('/token', { grant_type: 'client_credentials' }, auth)))
    )['access_token'] as string
    const b = (
      await json(await server.token(post('/token', { grant_type: 'client_credentials' }, auth)))
    )['access_token'] as string
    expect(a.slice(0, 22)).not.toBe(b.slice(0, 22))
    await server.revoke(post('/oauth/revoke', { token: a }, auth))
    expect(await server.introspectToken(a)).toEqual({ active: false })
    expect(await server.introspectToken(b)).toMatchObject({ active: true })
  })

  test('an unknown resource: invalid_target (RFC 8707)', async () => {
    const { server } = await makeServer()
    const response = await server.token(
      post(
        '/token',
        { grant_type: 'client_credentials', resource: 'https://nope.example.com/' },
        auth,
      ),
    )
    expect(await json(response)).toMatchObject({ error: 'invalid_target' })
  })
})
