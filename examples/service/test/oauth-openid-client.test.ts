// openid-client (the certified relying-party library built on oauth4webapi) against the running
// service: discovery, the code flow with PKCE through the real pages with non-repudiation
// checks (the ID token's signature verified against the JWKS), a protected-resource call,
// refresh rotation and reuse, client credentials, introspection and revocation. On the memory
// store, and on PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set.
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { DEMO_BACKEND, DEMO_SPA, throughPages } from './oauth-client.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStoreRun, storeRuns, storeRunTitle } from './store-runs.ts'

const insecure = { execute: [client.allowInsecureRequests] }

for (const run of storeRuns) {
  describe.skipIf(run.skip !== undefined)(
    `openid-client against the service, ${storeRunTitle(run)}`,
    () => {
      let running: RunningService
      let spa: client.Configuration
      let backend: client.Configuration
      let base: string

      beforeAll(async () => {
        running = await serveOnStoreRun(run, {
          service: { rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }] },
        })
        base = running.base
        spa = await client.discovery(new URL(base), DEMO_SPA.id, undefined, client.None(), insecure)
        client.enableNonRepudiationChecks(spa)
        backend = await client.discovery(
          new URL(base),
          DEMO_BACKEND.id,
          DEMO_BACKEND.secret,
          client.ClientSecretBasic(DEMO_BACKEND.secret),
          insecure,
        )
      }, 30_000)
      afterAll(() => running?.close())

      async function signIn(scope = 'openid profile email offline_access read:orders') {
        const verifier = client.randomPKCECodeVerifier()
        const state = client.randomState()
        const nonce = client.randomNonce()
        const url = client.buildAuthorizationUrl(spa, {
          redirect_uri: DEMO_SPA.redirectUri,
          scope,
          state,
          nonce,
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        })
        const { callback } = await throughPages(url)
        return client.authorizationCodeGrant(spa, callback, {
          pkceCodeVerifier: verifier,
          expectedState: state,
          expectedNonce: nonce,
          idTokenExpected: true,
        })
      }
      const orders = (token: string, init: RequestInit = {}) =>
        fetch(`${base}/v1/orders`, {
          ...init,
          headers: {
            authorization: `Bearer ${token}`,
            ...(init.headers as Record<string, string>),
          },
        })

      test(`the OAuth state is ${run.store ? `in a ${run.store}` : 'in memory'}`, () => {
        expect(running.stores.oauthStore?.constructor.name).toBe(run.store)
      })

      test('the code flow with PKCE, the ID token verified with its signature (non-repudiation checks), the API called with the access token', async () => {
        const tokens = await signIn()
        expect(tokens.claims()).toMatchObject({
          iss: base,
          sub: 'ada',
          aud: DEMO_SPA.id,
          name: 'Ada Lovelace',
          email: 'ada@example.com',
          email_verified: true,
        })
        const response = await client.fetchProtectedResource(
          spa,
          tokens.access_token,
          new URL(`${base}/v1/orders`),
          'GET',
        )
        expect(response.status).toBe(200)
        expect((await response.json()).data).toEqual([])
      })

      test('MUST rotate refresh tokens; a reused one is invalid_grant and revokes the family (RFC 9700 §4.14.2)', async () => {
        const first = await signIn()
        const second = await client.refreshTokenGrant(spa, first.refresh_token as string)
        expect(second.refresh_token).not.toBe(first.refresh_token)
        expect((await orders(second.access_token)).status).toBe(200)
        await expect(
          client.refreshTokenGrant(spa, first.refresh_token as string),
        ).rejects.toMatchObject({
          error: 'invalid_grant',
        })
        const introspected = await client.tokenIntrospection(backend, second.access_token)
        expect(introspected.active).toBe(false)
        expect((await orders(second.access_token)).status).toBe(401)
        await expect(
          client.refreshTokenGrant(spa, second.refresh_token as string),
        ).rejects.toMatchObject({ error: 'invalid_grant' })
      })

      test('client credentials: a token for the back end itself, scope-checked by the API', async () => {
        const machine = await client.clientCredentialsGrant(backend, { scope: 'read:orders' })
        expect(machine.scope).toBe('read:orders')
        expect(machine.refresh_token).toBeUndefined()
        expect((await orders(machine.access_token)).status).toBe(200)
        expect((await orders(machine.access_token, { method: 'POST', body: '{}' })).status).toBe(
          403,
        )
        expect(await client.tokenIntrospection(backend, machine.access_token)).toMatchObject({
          active: true,
          client_id: DEMO_BACKEND.id,
          sub: DEMO_BACKEND.id,
        })
      })

      test('introspection with username; revocation of an access token taking effect at once', async () => {
        const user = await signIn('openid read:orders')
        const details = await client.tokenIntrospection(backend, user.access_token)
        expect(details).toMatchObject({
          active: true,
          username: 'ada',
          sub: 'ada',
          client_id: DEMO_SPA.id,
          scope: 'openid read:orders',
        })
        await client.tokenRevocation(spa, user.access_token)
        expect((await client.tokenIntrospection(backend, user.access_token)).active).toBe(false)
        expect((await orders(user.access_token)).status).toBe(401)
      })

      test('revocation of a refresh token revokes its family (RFC 7009 §2.1)', async () => {
        const user = await signIn()
        await client.tokenRevocation(spa, user.refresh_token as string)
        expect((await client.tokenIntrospection(backend, user.access_token)).active).toBe(false)
        expect((await orders(user.access_token)).status).toBe(401)
        await expect(
          client.refreshTokenGrant(spa, user.refresh_token as string),
        ).rejects.toMatchObject({ error: 'invalid_grant' })
      })
    },
  )
}
