import { describe, expect, test } from 'vitest'
import { BACKEND_SECRET, basic, ISSUER, json, makeServer, post } from '../test/kit.ts'
import { MemoryOAuthStore } from './memory-store.ts'
import { createAuthorizationServer } from './server.ts'

describe('handle() and discovery', () => {
  test('both well-knowns answer the same document (RFC 8414 §3, OpenID Connect Discovery §4)', async () => {
    const { server } = await makeServer()
    const oidc = await server.handle(new Request(`${ISSUER}/.well-known/openid-configuration`))
    const oauth = await server.handle(
      new Request(`${ISSUER}/.well-known/oauth-authorization-server`),
    )
    expect(oidc!.status).toBe(200)
    expect(oidc!.headers.get('content-type')).toBe('application/json')
    const document = await oidc!.json()
    expect(await oauth!.json()).toEqual(document)
    expect(document).toEqual(server.metadata)
    expect(document).toEqual({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/authorize`,
      token_endpoint: `${ISSUER}/token`,
      introspection_endpoint: `${ISSUER}/oauth/introspect`,
      revocation_endpoint: `${ISSUER}/oauth/revoke`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      userinfo_endpoint: `${ISSUER}/userinfo`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'none',
      ],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: [
        'openid',
        'offline_access',
        'read:orders',
        'write:orders',
        'manage:webhooks',
        'profile',
        'email',
      ],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      claims_supported: expect.arrayContaining([
        'sub',
        'iss',
        'auth_time',
        'nonce',
        'name',
        'email',
        'email_verified',
      ]),
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    })
  })

  test('the JWKS publishes the public signing key, whose alg is advertised', async () => {
    const { server } = await makeServer()
    const response = await server.handle(new Request(`${ISSUER}/.well-known/jwks.json`))
    const jwks = (await response!.json()) as { keys: Record<string, unknown>[] }
    expect(jwks.keys).toHaveLength(1)
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })
    expect(jwks.keys[0]).not.toHaveProperty('d')
  })

  test('routes every endpoint and nothing else', async () => {
    const { server } = await makeServer()
    const post = (path: string) =>
      server.handle(
        new Request(`${ISSUER}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: '',
        }),
      )
    expect((await post('/token'))!.status).toBe(400)
    expect((await post('/oauth/introspect'))!.status).toBe(401)
    expect((await post('/oauth/revoke'))!.status).toBe(401)
    expect((await server.handle(new Request(`${ISSUER}/authorize`)))!.status).toBe(400)
    expect(await server.handle(new Request(`${ISSUER}/v1/orders`))).toBeUndefined()
    expect(await server.handle(new Request(`${ISSUER}/token/x`))).toBeUndefined()
  })

  test.each([
    ['GET', '/token'],
    ['GET', '/oauth/introspect'],
    ['GET', '/oauth/revoke'],
    ['HEAD', '/authorize'],
    ['PUT', '/authorize'],
    ['POST', '/.well-known/openid-configuration'],
    ['DELETE', '/.well-known/jwks.json'],
  ])('%s %s is 405 with Allow', async (method, path) => {
    const { server } = await makeServer()
    const response = await server.handle(new Request(`${ISSUER}${path}`, { method }))
    expect(response!.status).toBe(405)
    expect(response!.headers.get('allow')).toBeTruthy()
  })

  test('an issuer with a path: endpoints under it, and the RFC 8414 §3.1 well-known too', async () => {
    const server = createAuthorizationServer({
      issuer: 'https://example.com/auth',
      clients: [],
      interactionUrl: (id) => `/login?i=${id}`,
    })
    expect(server.metadata.token_endpoint).toBe('https://example.com/auth/token')
    for (const path of [
      '/auth/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server/auth',
    ]) {
      const response = await server.handle(new Request(`https://example.com${path}`))
      expect(await json(response!)).toMatchObject({ issuer: 'https://example.com/auth' })
    }
    expect(
      await server.handle(new Request('https://example.com/token', { method: 'POST' })),
    ).toBeUndefined()
  })

  test('CORS for browser clients at the token and revocation endpoints, with the preflight', async () => {
    const { server } = await makeServer()
    for (const path of ['/token', '/oauth/revoke']) {
      const preflight = await server.handle(new Request(`${ISSUER}${path}`, { method: 'OPTIONS' }))
      expect(preflight!.status).toBe(204)
      expect(preflight!.headers.get('access-control-allow-origin')).toBe('*')
      expect(preflight!.headers.get('access-control-allow-headers')).toContain('content-type')
      const answer = await server.handle(new Request(`${ISSUER}${path}`, { method: 'POST' }))
      expect(answer!.headers.get('access-control-allow-origin')).toBe('*')
    }
    // Introspection is for servers: no CORS.
    const introspect = await server.handle(
      new Request(`${ISSUER}/oauth/introspect`, { method: 'POST' }),
    )
    expect(introspect!.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('a store that fails: 500 server_error, told to onEvent, nothing of the error shown', async () => {
    const store = new MemoryOAuthStore()
    const failure = new Error('connection refused 10.0.0.7')
    store.issue = async () => {
      throw failure
    }
    const harness = await makeServer({ store })
    const response = await harness.server.token(
      post(
        '/token',
        { grant_type: 'client_credentials' },
        { authorization: basic('demo-backend', BACKEND_SECRET) },
      ),
    )
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(JSON.parse(text)).toMatchObject({ error: 'server_error' })
    expect(text).not.toContain('10.0.0.7')
    expect(harness.events).toContainEqual({
      type: 'server_error',
      code: 'SERVER_ERROR',
      error: failure,
    })
  })

  test('configured paths', async () => {
    const { server } = await makeServer({ paths: { token: '/oauth/token' } })
    expect(server.metadata.token_endpoint).toBe(`${ISSUER}/oauth/token`)
    expect(await server.handle(new Request(`${ISSUER}/token`, { method: 'POST' }))).toBeUndefined()
    expect(
      (await server.handle(new Request(`${ISSUER}/oauth/token`, { method: 'POST' })))!.status,
    ).toBe(400)
  })
})

describe('options are checked at creation', () => {
  const base = { issuer: ISSUER, clients: [], interactionUrl: (id: string) => id }
  test.each([
    ['an http issuer that is not loopback', { issuer: 'http://as.example.com' }],
    ['an issuer with a query', { issuer: 'https://as.example.com?x=1' }],
    ['a relative issuer', { issuer: '/as' }],
    ['a short token key', { tokenKey: new Uint8Array(16) }],
    ['an access token TTL under 5 minutes', { ttl: { accessToken: 60 } }],
    ['an access token TTL over 60 minutes', { ttl: { accessToken: 7200 } }],
    ['a refresh token TTL under a day', { ttl: { refreshToken: 3600 } }],
    ['a refresh token TTL over 90 days', { ttl: { refreshToken: 91 * 86_400 } }],
    ['a grace over a minute', { refreshReuseGraceMs: 120_000 }],
    ['a resource that is not a URI', { resources: [{ identifier: 'orders' }] }],
    ['no resource', { resources: [] }],
    ['an advertised scope outside the grammar', { scopesSupported: ['admin'] }],
    ['a form limit under 1 KiB', { maxFormBytes: 10 }],
    ['a path that is not absolute', { paths: { token: 'token' } }],
  ])('refuses %s', (_name, change) => {
    expect(() => createAuthorizationServer({ ...base, ...change })).toThrow()
  })

  test('http is allowed for loopback issuers', () => {
    expect(createAuthorizationServer({ ...base, issuer: 'http://127.0.0.1:3000' }).issuer).toBe(
      'http://127.0.0.1:3000',
    )
    expect(createAuthorizationServer({ ...base, issuer: 'http://localhost:3000' }).issuer).toBe(
      'http://localhost:3000',
    )
  })
})
