// openid-client (the certified relying-party library built on oauth4webapi) against the running
// service: discovery, the code flow with PKCE through the real pages with non-repudiation
// checks (the ID token's signature verified against the JWKS), a protected-resource call,
// refresh rotation and reuse, client credentials, introspection and revocation.
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { DEMO_BACKEND, DEMO_SPA, throughPages } from './oauth-client.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStores } from './serve-on-stores.ts'

let running: RunningService
let spa: client.Configuration
let backend: client.Configuration
let base: string
const insecure = { execute: [client.allowInsecureRequests] }

beforeAll(async () => {
  running = await serveOnStores(
    {},
    { service: { rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }] } },
  )
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
})
afterAll(() => running.close())

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

describe('openid-client against the service', () => {
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

  test('refresh rotation, then reuse detection revoking the family', async () => {
    const first = await signIn()
    const second = await client.refreshTokenGrant(spa, first.refresh_token as string)
    expect(second.refresh_token).not.toBe(first.refresh_token)
    await expect(
      client.refreshTokenGrant(spa, first.refresh_token as string),
    ).rejects.toMatchObject({
      error: 'invalid_grant',
    })
    const introspected = await client.tokenIntrospection(backend, second.access_token)
    expect(introspected.active).toBe(false)
    const refused = await fetch(`${base}/v1/orders`, {
      headers: { authorization: `Bearer ${second.access_token}` },
    })
    expect(refused.status).toBe(401)
  })

  test('client credentials, introspection with username, revocation taking effect at once', async () => {
    const machine = await client.clientCredentialsGrant(backend, { scope: 'read:orders' })
    expect(machine.scope).toBe('read:orders')
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
    const refused = await fetch(`${base}/v1/orders`, {
      headers: { authorization: `Bearer ${user.access_token}` },
    })
    expect(refused.status).toBe(401)
  })
})
