// The service as its own authorisation server, against a real OpenID Connect client library
// (oauth4webapi, which checks what certified relying parties check): discovery, the code flow
// with PKCE through the real login and consent pages, the ID token with its signature, refresh
// rotation and reuse detection, client credentials, introspection, revocation, and 50
// concurrent refreshes over HTTP. On the memory store, and on Redis and PostgreSQL when
// REDIS_URL / DATABASE_URL are set.
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { apiFetch, basic, DEMO_BACKEND, DEMO_SPA, throughPages } from './oauth-client.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStores } from './serve-on-stores.ts'
import { serveOnStoreRun, storeRuns, storeRunTitle } from './store-runs.ts'

const http = { [oauth.allowInsecureRequests]: true } as const
const spa: oauth.Client = { client_id: DEMO_SPA.id }
const backend: oauth.Client = { client_id: DEMO_BACKEND.id }
const backendAuth = oauth.ClientSecretBasic(DEMO_BACKEND.secret)

for (const run of storeRuns) {
  describe.skipIf(run.skip !== undefined)(
    `oauth4webapi against the service, ${storeRunTitle(run)}`,
    () => {
      let running: RunningService
      let as: oauth.AuthorizationServer
      let base: string

      beforeAll(async () => {
        running = await serveOnStoreRun(run, {
          // A quota no test reaches: the 50 concurrent refreshes are not about rate limits.
          service: { rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }] },
        })
        base = running.base
        const issuer = new URL(base)
        as = await oauth.processDiscoveryResponse(
          issuer,
          await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http }),
        )
      }, 30_000)
      afterAll(() => running?.close())

      /** The code flow of the public demo SPA up to the token response, through the pages. */
      async function codeFlow(
        scope = 'openid profile email offline_access read:orders write:orders',
        pages: Parameters<typeof throughPages>[1] = {},
      ) {
        const verifier = oauth.generateRandomCodeVerifier()
        const state = oauth.generateRandomState()
        const openid = scope.split(' ').includes('openid')
        const nonce = openid ? oauth.generateRandomNonce() : undefined
        const url = new URL(as.authorization_endpoint as string)
        url.search = new URLSearchParams({
          client_id: DEMO_SPA.id,
          redirect_uri: DEMO_SPA.redirectUri,
          response_type: 'code',
          scope,
          state,
          ...(nonce ? { nonce } : {}),
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        }).toString()
        const { callback, consentPage } = await throughPages(url, pages)
        expect(`${callback.origin}${callback.pathname}`).toBe(DEMO_SPA.redirectUri)
        // Checks state and, since discovery says it is sent, iss (RFC 9207).
        const params = oauth.validateAuthResponse(as, spa, callback, state)
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          spa,
          oauth.None(),
          params,
          DEMO_SPA.redirectUri,
          verifier,
          http,
        )
        const result = await oauth.processAuthorizationCodeResponse(
          as,
          spa,
          response,
          nonce ? { expectedNonce: nonce, requireIdToken: true } : {},
        )
        return { result, response, consentPage, params, verifier }
      }

      const orders = (token: string, init: RequestInit = {}) =>
        fetch(`${base}/v1/orders`, {
          ...init,
          headers: {
            authorization: `Bearer ${token}`,
            ...(init.headers as Record<string, string>),
          },
        })
      const introspect = async (token: string) =>
        oauth.processIntrospectionResponse(
          as,
          backend,
          await oauth.introspectionRequest(as, backend, backendAuth, token, http),
        )
      const refresh = async (token: string) =>
        oauth.processRefreshTokenResponse(
          as,
          spa,
          await oauth.refreshTokenGrantRequest(as, spa, oauth.None(), token, http),
        )

      test(`the OAuth state is ${run.store ? `in a ${run.store}` : 'in memory'}`, () => {
        expect(running.stores.oauthStore?.constructor.name).toBe(run.store)
      })

      test('discovery: the issuer is the public URL, with every member a client needs', () => {
        expect(as.issuer).toBe(base)
        expect(as).toMatchObject({
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          introspection_endpoint: `${base}/oauth/introspect`,
          revocation_endpoint: `${base}/oauth/revoke`,
          jwks_uri: `${base}/.well-known/jwks.json`,
          code_challenge_methods_supported: ['S256'],
          response_types_supported: ['code'],
          authorization_response_iss_parameter_supported: true,
        })
        expect(as.scopes_supported).toEqual(
          expect.arrayContaining(['openid', 'read:orders', 'write:orders', 'manage:webhooks']),
        )
      })

      test('the code flow with PKCE through the login and consent pages: an ID token verified with its signature, an access token the API takes', async () => {
        const { result, response, consentPage } = await codeFlow()
        expect(consentPage).toContain('Demo single-page app')
        // The ID token's signature, checked against the JWKS (non-repudiation).
        await oauth.validateApplicationLevelSignature(as, response, http)
        const claims = oauth.getValidatedIdTokenClaims(result)
        expect(claims).toMatchObject({
          iss: base,
          sub: 'ada',
          aud: DEMO_SPA.id,
          name: 'Ada Lovelace',
          email: 'ada@example.com',
          email_verified: true,
        })
        expect(typeof claims?.auth_time).toBe('number')
        expect(result.token_type.toLowerCase()).toBe('bearer')
        expect(result.scope?.split(' ').sort()).toEqual(
          ['email', 'offline_access', 'openid', 'profile', 'read:orders', 'write:orders'].sort(),
        )
        expect(result.refresh_token).toBeDefined()
        const list = await orders(result.access_token)
        expect(list.status).toBe(200)
        const created = await orders(result.access_token, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ customer: 'Ada Lovelace', items: [{ sku: 'B-1', quantity: 1 }] }),
        })
        expect(created.status).toBe(201)
      })

      test('MUST bind only the approved scopes: unticked ones are in neither the tokens nor the ID token', async () => {
        const { result } = await codeFlow(undefined, {
          untick: ['email', 'offline_access', 'write:orders'],
        })
        expect(result.scope?.split(' ').sort()).toEqual(['openid', 'profile', 'read:orders'])
        expect(result.refresh_token).toBeUndefined()
        const claims = oauth.getValidatedIdTokenClaims(result)
        expect(claims?.['name']).toBe('Ada Lovelace')
        expect(claims?.['email']).toBeUndefined()
        expect((await orders(result.access_token)).status).toBe(200)
        const write = await orders(result.access_token, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
        expect(write.status).toBe(403)
        expect(write.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/)
        expect(write.headers.get('www-authenticate')).toMatch(/scope="write:orders"/)
      })

      test('a denied consent returns access_denied with state and iss to the client', async () => {
        const state = oauth.generateRandomState()
        const url = new URL(as.authorization_endpoint as string)
        url.search = new URLSearchParams({
          client_id: DEMO_SPA.id,
          redirect_uri: DEMO_SPA.redirectUri,
          response_type: 'code',
          scope: 'read:orders',
          state,
          code_challenge: await oauth.calculatePKCECodeChallenge(
            oauth.generateRandomCodeVerifier(),
          ),
          code_challenge_method: 'S256',
        }).toString()
        const { callback } = await throughPages(url, { decision: 'deny' })
        expect(callback.searchParams.get('error')).toBe('access_denied')
        expect(callback.searchParams.get('state')).toBe(state)
        expect(callback.searchParams.get('iss')).toBe(base)
        expect(callback.searchParams.get('code')).toBeNull()
        expect(() => oauth.validateAuthResponse(as, spa, callback, state)).toThrow(
          oauth.AuthorizationResponseError,
        )
      })

      test('MUST rotate refresh tokens; a reused one is invalid_grant and revokes the family (RFC 9700 §4.14.2)', async () => {
        const { result: first } = await codeFlow()
        const second = await refresh(first.refresh_token as string)
        expect(second.refresh_token).toBeDefined()
        expect(second.refresh_token).not.toBe(first.refresh_token)
        expect((await orders(second.access_token)).status).toBe(200)
        // The rotated token presented again: theft assumed, the family revoked.
        const reuse = refresh(first.refresh_token as string)
        await expect(reuse).rejects.toThrow(oauth.ResponseBodyError)
        await expect(reuse).rejects.toMatchObject({ error: 'invalid_grant' })
        // The family's newest access and refresh tokens die with it.
        const refused = await orders(second.access_token)
        expect(refused.status).toBe(401)
        expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
        expect(await introspect(second.access_token)).toEqual({ active: false })
        await expect(refresh(second.refresh_token as string)).rejects.toMatchObject({
          error: 'invalid_grant',
        })
      })

      test('a refresh may narrow the scope, never widen it: the new access token carries only what was asked (RFC 6749 §6)', async () => {
        const { result: first } = await codeFlow('openid offline_access read:orders write:orders')
        const narrowed = await oauth.processRefreshTokenResponse(
          as,
          spa,
          await oauth.refreshTokenGrantRequest(
            as,
            spa,
            oauth.None(),
            first.refresh_token as string,
            { ...http, additionalParameters: { scope: 'offline_access read:orders' } },
          ),
        )
        expect(narrowed.scope?.split(' ').sort()).toEqual(['offline_access', 'read:orders'])
        expect((await orders(narrowed.access_token)).status).toBe(200)
        const write = await orders(narrowed.access_token, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
        expect(write.status).toBe(403)
        expect(write.headers.get('www-authenticate')).toMatch(/scope="write:orders"/)
        expect((await introspect(narrowed.access_token)).scope).toBe('offline_access read:orders')
        // Beyond the grant (email was never granted): invalid_scope.
        await expect(
          oauth.processRefreshTokenResponse(
            as,
            spa,
            await oauth.refreshTokenGrantRequest(
              as,
              spa,
              oauth.None(),
              narrowed.refresh_token as string,
              { ...http, additionalParameters: { scope: 'read:orders email' } },
            ),
          ),
        ).rejects.toMatchObject({ error: 'invalid_scope' })
      })

      test('MUST: a replayed code is invalid_grant and revokes what it issued: the API refuses the first access token (RFC 6749 §4.1.2)', async () => {
        const { result, params, verifier } = await codeFlow()
        expect((await orders(result.access_token)).status).toBe(200)
        const replay = await oauth.authorizationCodeGrantRequest(
          as,
          spa,
          oauth.None(),
          params,
          DEMO_SPA.redirectUri,
          verifier,
          http,
        )
        expect(replay.status).toBe(400)
        expect((await replay.json()).error).toBe('invalid_grant')
        expect((await orders(result.access_token)).status).toBe(401)
        await expect(refresh(result.refresh_token as string)).rejects.toMatchObject({
          error: 'invalid_grant',
        })
      })

      test('client credentials: a token for the back end itself, scope-checked by the API', async () => {
        const result = await oauth.processClientCredentialsResponse(
          as,
          backend,
          await oauth.clientCredentialsGrantRequest(
            as,
            backend,
            backendAuth,
            new URLSearchParams({ scope: 'read:orders' }),
            http,
          ),
        )
        expect(result.refresh_token).toBeUndefined()
        expect(result.scope).toBe('read:orders')
        expect((await orders(result.access_token)).status).toBe(200)
        const write = await orders(result.access_token, { method: 'POST', body: '{}' })
        expect(write.status).toBe(403)
        const details = await introspect(result.access_token)
        expect(details).toMatchObject({
          active: true,
          client_id: DEMO_BACKEND.id,
          sub: DEMO_BACKEND.id,
        })
        expect(details.username).toBeUndefined()
        // A wrong secret: 401 invalid_client.
        const wrong = await oauth.clientCredentialsGrantRequest(
          as,
          backend,
          oauth.ClientSecretBasic('not-the-secret'),
          new URLSearchParams({ scope: 'read:orders' }),
          http,
        )
        expect(wrong.status).toBe(401)
        expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic /)
      })

      test('introspection: every member for a user token (username included); active: false for garbage; callers must authenticate', async () => {
        const { result } = await codeFlow('openid read:orders')
        const details = await introspect(result.access_token)
        expect(details).toMatchObject({
          active: true,
          scope: 'openid read:orders',
          client_id: DEMO_SPA.id,
          username: 'ada',
          sub: 'ada',
          aud: `${base}/v1`,
          iss: base,
          token_type: 'Bearer',
        })
        expect(details.exp).toBeGreaterThan(details.iat as number)
        expect(typeof details.jti).toBe('string')
        expect(await introspect('garbage')).toEqual({ active: false })
        expect(await introspect(`${'A'.repeat(22)}.${'B'.repeat(43)}`)).toEqual({ active: false })
        const anonymous = await fetch(`${base}/oauth/introspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: result.access_token }).toString(),
        })
        expect(anonymous.status).toBe(401)
        expect((await anonymous.json()).error).toBe('invalid_client')
      })

      test('revocation: a revoked access token is refused by the API at once; a revoked refresh token revokes its family', async () => {
        const { result } = await codeFlow()
        expect((await orders(result.access_token)).status).toBe(200)
        await oauth.processRevocationResponse(
          await oauth.revocationRequest(as, spa, oauth.None(), result.access_token, http),
        )
        const refused = await orders(result.access_token)
        expect(refused.status).toBe(401)
        expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
        expect(await introspect(result.access_token)).toEqual({ active: false })
        // The refresh token of the grant still works (only the access token was revoked)…
        const next = await refresh(result.refresh_token as string)
        // …until it is revoked: then the whole family is.
        await oauth.processRevocationResponse(
          await oauth.revocationRequest(as, spa, oauth.None(), next.refresh_token as string, http),
        )
        expect((await orders(next.access_token)).status).toBe(401)
        await expect(refresh(next.refresh_token as string)).rejects.toMatchObject({
          error: 'invalid_grant',
        })
        // Another client cannot revoke the token: 200, and nothing happens.
        const { result: other } = await codeFlow('read:orders')
        const foreign = await fetch(`${base}/oauth/revoke`, {
          method: 'POST',
          headers: {
            authorization: basic(DEMO_BACKEND.id, DEMO_BACKEND.secret),
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ token: other.access_token }).toString(),
        })
        expect(foreign.status).toBe(200)
        expect((await orders(other.access_token)).status).toBe(200)
      })

      test('MUST: of 50 concurrent refreshes of one token over HTTP, exactly one succeeds', async () => {
        const { result } = await codeFlow()
        const answers = await Promise.all(
          Array.from({ length: 50 }, () =>
            fetch(`${base}/token`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({
                grant_type: 'refresh_token',
                refresh_token: result.refresh_token as string,
                client_id: DEMO_SPA.id,
              }).toString(),
            }).then(async (response) => ({ status: response.status, body: await response.json() })),
          ),
        )
        expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1)
        const refused = answers.filter((answer) => answer.status !== 200)
        expect(refused).toHaveLength(49)
        for (const answer of refused) {
          expect(answer.status).toBe(400)
          expect(answer.body.error).toBe('invalid_grant')
        }
      })

      test('the API still works with the demo back end token of the test helpers', async () => {
        expect((await apiFetch(`${base}/v1/orders`)).status).toBe(200)
      })
    },
  )
}

describe('oauth4webapi against the service with ACCESS_TOKEN_FORMAT=jwt', () => {
  let running: RunningService
  beforeAll(async () => {
    running = await serveOnStores({}, { service: { oauth: { accessTokenFormat: 'jwt' } } })
  })
  afterAll(() => running.close())

  test('the code flow gives an RFC 9068 access token the API verifies with the JWKS; refresh works; introspection knows it', async () => {
    const base = running.base
    const issuer = new URL(base)
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http }),
    )
    const verifier = oauth.generateRandomCodeVerifier()
    const url = new URL(as.authorization_endpoint as string)
    url.search = new URLSearchParams({
      client_id: DEMO_SPA.id,
      redirect_uri: DEMO_SPA.redirectUri,
      response_type: 'code',
      scope: 'openid offline_access read:orders',
      state: 's',
      nonce: 'n',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()
    const { callback } = await throughPages(url)
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      spa,
      await oauth.authorizationCodeGrantRequest(
        as,
        spa,
        oauth.None(),
        oauth.validateAuthResponse(as, spa, callback, 's'),
        DEMO_SPA.redirectUri,
        verifier,
        http,
      ),
      { expectedNonce: 'n', requireIdToken: true },
    )
    const [header, payload] = tokens.access_token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()))
    expect(header).toMatchObject({ typ: 'at+jwt', alg: 'ES256' })
    expect(payload).toMatchObject({
      iss: base,
      sub: 'ada',
      aud: `${base}/v1`,
      client_id: DEMO_SPA.id,
    })
    const call = (token: string) =>
      fetch(`${base}/v1/orders`, { headers: { authorization: `Bearer ${token}` } })
    expect((await call(tokens.access_token)).status).toBe(200)
    const next = await oauth.processRefreshTokenResponse(
      as,
      spa,
      await oauth.refreshTokenGrantRequest(
        as,
        spa,
        oauth.None(),
        tokens.refresh_token as string,
        http,
      ),
    )
    expect((await call(next.access_token)).status).toBe(200)
    const details = await oauth.processIntrospectionResponse(
      as,
      backend,
      await oauth.introspectionRequest(as, backend, backendAuth, next.access_token, http),
    )
    expect(details).toMatchObject({ active: true, username: 'ada', client_id: DEMO_SPA.id })
  })
})
