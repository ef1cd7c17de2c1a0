/**
 * The whole protocol with a certified relying-party library as the client: oauth4webapi
 * against createAuthorizationServer served by node:http on port 0. Nothing of the client is
 * mocked; every check oauth4webapi makes (iss in the authorization response, the ID token's
 * claims, nonce, signature through the JWKS) runs.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { hashClientSecret } from '../src/clients.ts'
import type { OAuthEvent } from '../src/events.ts'
import { type AuthorizationServer, createAuthorizationServer } from '../src/server.ts'
import { makeStore } from './kit.ts'

const SPA_REDIRECT = 'http://127.0.0.1:5173/callback'
const JWT_API = 'https://jwt-api.example.com/'

async function toRequest(message: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = []
  for await (const chunk of message) chunks.push(chunk as Buffer)
  const headers = new Headers()
  for (const [name, value] of Object.entries(message.headers)) {
    if (typeof value === 'string') headers.set(name, value)
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item)
  }
  const method = message.method ?? 'GET'
  return new Request(new URL(message.url ?? '/', origin), {
    method,
    headers,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
  })
}

let http: Server
let server: AuthorizationServer
let issuer: string
const events: OAuthEvent[] = []

beforeAll(async () => {
  http = createServer()
  http.listen(0, '127.0.0.1')
  await once(http, 'listening')
  issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  server = createAuthorizationServer({
    issuer,
    store: makeStore(),
    clients: [
      {
        id: 'demo-backend',
        secretHashes: [await hashClientSecret('demo-backend-secret')],
        grantTypes: ['client_credentials'],
        scopes: ['read:orders', 'write:orders', 'manage:webhooks'],
      },
      {
        id: 'demo-spa',
        name: 'Demo SPA',
        public: true,
        redirectUris: [SPA_REDIRECT],
        grantTypes: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders', 'write:orders'],
      },
    ],
    interactionUrl: (id) => `${issuer}/login?interaction=${id}`,
    findAccount: async (subject) => ({
      subject,
      username: 'ada',
      claims: { name: 'Ada Lovelace', email: 'ada@example.com', email_verified: true },
    }),
    onEvent: (event) => events.push(event),
    resources: [
      { identifier: 'https://api.example.com/' },
      { identifier: JWT_API, accessTokenFormat: 'jwt' },
    ],
  })
  http.on('request', (message, reply) => {
    void (async () => {
      const response =
        (await server.handle(await toRequest(message, issuer))) ??
        new Response('Not Found', { status: 404 })
      reply.writeHead(response.status, Object.fromEntries(response.headers))
      reply.end(Buffer.from(await response.arrayBuffer()))
    })()
  })
})

afterAll(async () => {
  http.close()
  await once(http, 'close')
})

const insecure = { [oauth.allowInsecureRequests]: true }

describe('oauth4webapi against the server over HTTP', () => {
  test('discovery, the code flow with PKCE and an ID token, refresh rotation and reuse, client credentials, introspection, revocation', async () => {
    // Discovery (OpenID Connect Discovery §4).
    const as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oidc', ...insecure }),
    )
    expect(as.code_challenge_methods_supported).toEqual(['S256'])
    const spa: oauth.Client = { client_id: 'demo-spa' }

    // The authorization request, built by the client.
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const nonce = oauth.generateRandomNonce()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      client_id: spa.client_id,
      redirect_uri: SPA_REDIRECT,
      response_type: 'code',
      scope: 'openid profile email offline_access read:orders',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    }).toString()
    const authorize = await fetch(url, { redirect: 'manual' })
    expect(authorize.status).toBe(303)
    const interaction = new URL(authorize.headers.get('location')!).searchParams.get('interaction')!
    // The browser keeps the binding cookie and sends it to the login page.
    const page = new Request(authorize.headers.get('location')!, {
      headers: { cookie: authorize.headers.get('set-cookie')!.split(';')[0]! },
    })
    expect((await server.interaction(interaction, page))?.client).toEqual({
      id: 'demo-spa',
      name: 'Demo SPA',
    })

    // The host's login and consent pages report the user and the approval.
    const done = await server.completeInteraction(
      interaction,
      {
        subject: 'user-ada',
        scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders'],
      },
      page,
    )
    expect(done.status).toBe(303)
    const callback = new URL(done.headers.get('location')!)
    const parameters = oauth.validateAuthResponse(as, spa, callback, state)

    // The code exchange.
    const tokenResponse = await oauth.authorizationCodeGrantRequest(
      as,
      spa,
      oauth.None(),
      parameters,
      SPA_REDIRECT,
      verifier,
      insecure,
    )
    const tokens = await oauth.processAuthorizationCodeResponse(as, spa, tokenResponse, {
      expectedNonce: nonce,
      requireIdToken: true,
    })
    await oauth.validateApplicationLevelSignature(as, tokenResponse, insecure)
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({
      iss: issuer,
      sub: 'user-ada',
      aud: 'demo-spa',
      nonce,
      name: 'Ada Lovelace',
      email: 'ada@example.com',
    })
    expect(tokens.token_type).toBe('bearer')

    // UserInfo (OpenID Connect Core §5.3) with the access token.
    const userinfo = await oauth.processUserInfoResponse(
      as,
      spa,
      'user-ada',
      await oauth.userInfoRequest(as, spa, tokens.access_token, insecure),
    )
    expect(userinfo).toEqual({
      sub: 'user-ada',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      email_verified: true,
    })
    expect(tokens.refresh_token).toBeDefined()

    // Refresh: rotated.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      spa,
      await oauth.refreshTokenGrantRequest(as, spa, oauth.None(), tokens.refresh_token!, insecure),
    )
    expect(refreshed.refresh_token).toBeDefined()
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)

    // Reuse of the rotated refresh token: invalid_grant, and the family is revoked.
    const reuse = oauth.processRefreshTokenResponse(
      as,
      spa,
      await oauth.refreshTokenGrantRequest(as, spa, oauth.None(), tokens.refresh_token!, insecure),
    )
    await expect(reuse).rejects.toMatchObject({ error: 'invalid_grant', status: 400 })
    expect(events.some((event) => event.type === 'refresh_token_reused')).toBe(true)
    const revokedRefresh = oauth.processRefreshTokenResponse(
      as,
      spa,
      await oauth.refreshTokenGrantRequest(
        as,
        spa,
        oauth.None(),
        refreshed.refresh_token!,
        insecure,
      ),
    )
    await expect(revokedRefresh).rejects.toMatchObject({ error: 'invalid_grant' })

    // Client credentials, basic authentication (id and secret form-encoded by the client).
    const backend: oauth.Client = { client_id: 'demo-backend' }
    const backendAuth = oauth.ClientSecretBasic('demo-backend-secret')
    const cc = await oauth.processClientCredentialsResponse(
      as,
      backend,
      await oauth.clientCredentialsGrantRequest(
        as,
        backend,
        backendAuth,
        { scope: 'read:orders' },
        insecure,
      ),
    )
    expect(cc.scope).toBe('read:orders')

    // Introspection by the backend.
    const introspected = await oauth.processIntrospectionResponse(
      as,
      backend,
      await oauth.introspectionRequest(as, backend, backendAuth, cc.access_token, insecure),
    )
    expect(introspected).toMatchObject({
      active: true,
      client_id: 'demo-backend',
      sub: 'demo-backend',
      scope: 'read:orders',
      iss: issuer,
    })
    // The access token of the revoked family is inactive.
    const inactive = await oauth.processIntrospectionResponse(
      as,
      backend,
      await oauth.introspectionRequest(
        as,
        backend,
        oauth.ClientSecretPost('demo-backend-secret'),
        refreshed.access_token,
        insecure,
      ),
    )
    expect(inactive).toEqual({ active: false })

    // Revocation of the access token, then introspection says inactive.
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, backend, backendAuth, cc.access_token, insecure),
    )
    expect(await server.introspectToken(cc.access_token)).toEqual({ active: false })
  })

  test('error redirects carry state and iss, so oauth4webapi reads them as authorization errors', async () => {
    const as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oidc', ...insecure }),
    )
    const spa: oauth.Client = { client_id: 'demo-spa' }
    const state = oauth.generateRandomState()
    const query = {
      client_id: 'demo-spa',
      redirect_uri: SPA_REDIRECT,
      response_type: 'code',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
      state,
      nonce: oauth.generateRandomNonce(),
    }
    // A scope the client may not have: refused at /authorize.
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({ ...query, scope: 'openid manage:webhooks' }).toString()
    const refused = await fetch(url, { redirect: 'manual' })
    expect(refused.status).toBe(303)
    expect(() =>
      oauth.validateAuthResponse(as, spa, new URL(refused.headers.get('location')!), state),
    ).toThrow(
      expect.objectContaining({ code: oauth.AUTHORIZATION_RESPONSE_ERROR, error: 'invalid_scope' }),
    )
    // The user says no.
    url.search = new URLSearchParams({ ...query, scope: 'openid' }).toString()
    const started = await fetch(url, { redirect: 'manual' })
    const id = new URL(started.headers.get('location')!).searchParams.get('interaction')!
    const denied = await server.denyInteraction(
      id,
      new Request(started.headers.get('location')!, {
        headers: { cookie: started.headers.get('set-cookie')!.split(';')[0]! },
      }),
    )
    expect(() =>
      oauth.validateAuthResponse(as, spa, new URL(denied.headers.get('location')!), state),
    ).toThrow(
      expect.objectContaining({ code: oauth.AUTHORIZATION_RESPONSE_ERROR, error: 'access_denied' }),
    )
  })

  test('a wrong client secret: 401 with a Basic challenge', async () => {
    const as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oidc', ...insecure }),
    )
    const backend: oauth.Client = { client_id: 'demo-backend' }
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      backend,
      oauth.ClientSecretBasic('wrong'),
      { scope: 'read:orders' },
      insecure,
    )
    await expect(
      oauth.processClientCredentialsResponse(as, backend, response),
    ).rejects.toMatchObject({
      code: oauth.WWW_AUTHENTICATE_CHALLENGE,
      status: 401,
    })
  })

  test('an RFC 9068 JWT access token passes oauth4webapi validateJwtAccessToken (the resource-server side)', async () => {
    const as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oidc', ...insecure }),
    )
    const backend: oauth.Client = { client_id: 'demo-backend' }
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      backend,
      await oauth.clientCredentialsGrantRequest(
        as,
        backend,
        oauth.ClientSecretPost('demo-backend-secret'),
        { scope: 'read:orders', resource: JWT_API },
        insecure,
      ),
    )
    const claims = await oauth.validateJwtAccessToken(
      as,
      new Request(`${JWT_API}v1/orders`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      }),
      JWT_API,
      insecure,
    )
    expect(claims).toMatchObject({
      iss: issuer,
      aud: JWT_API,
      sub: 'demo-backend',
      client_id: 'demo-backend',
      scope: 'read:orders',
    })
  })
})
