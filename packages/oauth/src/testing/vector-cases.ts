/**
 * Revocation (RFC 7009) and introspection (RFC 7662) through the endpoints, with the RFCs'
 * example requests as vectors: a refresh token revokes its family, an access token itself.
 *
 * @module
 */
import { expect } from 'vitest'
import { hashClientSecret } from '../clients.ts'
import type { MakeServer, ServerSuiteContext } from './server-context.ts'
import type { Harness } from './server-kit.ts'
import {
  BACKEND_SECRET,
  basic,
  exchange,
  ISSUER,
  json,
  obtainCode,
  post,
  SPA_REDIRECT,
} from './server-kit.ts'
import { RFC7009_EXAMPLE } from './vectors/rfc7009.ts'
import { RFC7662_EXAMPLE } from './vectors/rfc7662.ts'

/** A server whose clients include the RFC 7662 example's, a resource server of the issuer. */
async function rfcServer(makeServer: MakeServer): Promise<Harness> {
  return makeServer({
    clients: [
      {
        id: RFC7662_EXAMPLE.clientId,
        secretHashes: [await hashClientSecret(RFC7662_EXAMPLE.clientSecret)],
        grantTypes: ['client_credentials'],
        scopes: ['read:orders'],
        // The resource server of the default resource (the issuer).
        resources: [ISSUER],
      },
      {
        id: 'demo-backend',
        secretHashes: [await hashClientSecret(BACKEND_SECRET)],
        grantTypes: ['client_credentials'],
        scopes: ['read:orders'],
      },
      {
        id: 'demo-spa',
        public: true,
        redirectUris: [SPA_REDIRECT],
        grantTypes: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders'],
      },
    ],
  })
}

/** A client-credentials access token of demo-backend. */
async function clientToken(harness: Harness): Promise<string> {
  const response = await harness.server.token(
    post(
      '/token',
      { grant_type: 'client_credentials' },
      { authorization: basic('demo-backend', BACKEND_SECRET) },
    ),
  )
  return (await json(response))['access_token'] as string
}

/** Registers the revocation cases. */
export function revocationCases({ it }: ServerSuiteContext): void {
  it('the RFC 7009 §2.1 request: an unknown refresh token MUST still answer 200 (§2.2)', async (makeServer) => {
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

  it('a refresh token MUST revoke its whole family: the access token too (RFC 7009 §2.1)', async (makeServer) => {
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

  it('an access token revokes itself only: the refresh token still works', async (makeServer) => {
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

  it("another client's token: 200, and nothing is revoked", async (makeServer) => {
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

  it('an unauthenticated caller is refused with 401 invalid_client', async (makeServer) => {
    const harness = await makeServer()
    const response = await harness.server.revoke(
      post('/oauth/revoke', { token: 'x' }, { authorization: basic('demo-backend', 'wrong') }),
    )
    expect(response.status).toBe(401)
    expect(await json(response)).toMatchObject({ error: 'invalid_client' })
  })
}

/** Registers the introspection cases. */
export function introspectionCases({ it }: ServerSuiteContext): void {
  it('the RFC 7662 §2.1 request: an unknown token MUST be exactly {"active":false} (§2.2)', async (makeServer) => {
    const { server } = await rfcServer(makeServer)
    const response = await server.introspect(
      post('/oauth/introspect', RFC7662_EXAMPLE.body, {
        authorization: RFC7662_EXAMPLE.authorization,
      }),
    )
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(await response.text()).toBe(RFC7662_EXAMPLE.inactiveResponse)
  })

  it('an active token carries every field of the RFC 7662 §2.2 example (but the extension)', async (makeServer) => {
    const harness = await rfcServer(makeServer)
    const { code } = await obtainCode(harness)
    const tokens = await json(await exchange(harness, code))
    const response = await harness.server.introspect(
      post(
        '/oauth/introspect',
        { token: tokens['access_token'] as string, token_type_hint: 'access_token' },
        {
          authorization: RFC7662_EXAMPLE.authorization,
        },
      ),
    )
    const body = await json(response)
    const expected = Object.keys(RFC7662_EXAMPLE.activeResponse).filter(
      (k) => k !== 'extension_field',
    )
    for (const field of expected) expect(body).toHaveProperty(field)
    expect(body).toMatchObject({
      active: true,
      client_id: 'demo-spa',
      username: 'ada',
      sub: 'user-ada',
      aud: ISSUER,
      iss: ISSUER,
      token_type: 'Bearer',
    })
  })

  it('client credentials: sub is the client, and there is no username', async (makeServer) => {
    const harness = await rfcServer(makeServer)
    const token = await clientToken(harness)
    const body = await json(
      await harness.server.introspect(
        post('/oauth/introspect', { token }, { authorization: RFC7662_EXAMPLE.authorization }),
      ),
    )
    expect(body).toMatchObject({
      active: true,
      sub: 'demo-backend',
      client_id: 'demo-backend',
      scope: 'read:orders',
    })
    expect(body).not.toHaveProperty('username')
  })
}
