// Two instances on one shared store, with the same OAUTH_TOKEN_KEY and OAUTH_SIGNING_KEYS,
// behave as one authorisation server: a code made on one is redeemed on the other, tokens of
// one are honoured by the other's API, a refresh on one rotates what the other issued, and a
// revocation on one takes effect on the other at once. On PostgreSQL and on Redis, when
// DATABASE_URL / REDIS_URL are set.
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import * as oauth from 'oauth4webapi'
import { afterAll, describe, expect, test } from 'vitest'
import type { ServiceOptions } from '../src/app.ts'
import { parseSigningKeys } from '../src/config.ts'
import type { StoreEnvironment } from '../src/stores.ts'
import { Browser, DEMO_BACKEND, DEMO_SPA, throughPages } from './oauth-client.ts'
import { serveOnStores } from './serve-on-stores.ts'

const redisUrl = process.env['REDIS_URL']
const databaseUrl = process.env['DATABASE_URL']
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/** What every instance gets alike: the token key and the signing keys (as main.ts reads them). */
function sharedKeys(): ServiceOptions['oauth'] {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    format: 'jwk',
  })
  return {
    tokenKey: new Uint8Array(randomBytes(32)),
    signingKeys: parseSigningKeys(JSON.stringify([{ kid: 'shared-1', alg: 'ES256', ...jwk }])),
  }
}

async function twoInstances(env: StoreEnvironment) {
  const oauthOptions = sharedKeys()
  const rateLimits = [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }]
  const a = await serveOnStores(env, { service: { rateLimits, oauth: { ...oauthOptions } } })
  cleanups.push(a.close)
  // Behind one public URL in production; here the issuer is a's address, and requests for b go
  // to b's port.
  const b = await serveOnStores(env, {
    service: { rateLimits, publicUrl: a.base, oauth: { ...oauthOptions } },
  })
  cleanups.push(b.close)
  return { a: a.base, b: b.base }
}

const runs: { name: string; skip?: string; env: () => Promise<StoreEnvironment> }[] = [
  {
    name: 'PostgreSQL',
    ...(databaseUrl ? {} : { skip: 'DATABASE_URL not set' }),
    env: async () => {
      const schema = `oauth_two_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
      cleanups.push(async () => {
        const pg = (await import('pg')).default
        const admin = new pg.Client({ connectionString: databaseUrl })
        await admin.connect()
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        await admin.end()
      })
      return { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema }
    },
  },
  {
    name: 'Redis',
    ...(redisUrl ? {} : { skip: 'REDIS_URL not set' }),
    env: async () => ({ REDIS_URL: redisUrl, REDIS_PREFIX: `test:oauth2:${crypto.randomUUID()}:` }),
  },
]

for (const run of runs) {
  describe.skipIf(run.skip !== undefined)(
    `two instances on one ${run.name} are one authorisation server${run.skip ? ` (skipped: ${run.skip})` : ''}`,
    () => {
      test('a code, tokens, a refresh and a revocation made on one are honoured by the other', async () => {
        const { a, b } = await twoInstances(await run.env())
        const issuer = new URL(a)
        const as = await oauth.processDiscoveryResponse(
          issuer,
          await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }),
        )
        // Requests that oauth4webapi addresses to the issuer (a), sent to b instead.
        const onB = {
          [oauth.allowInsecureRequests]: true,
          [oauth.customFetch]: (url: string, init: RequestInit) => fetch(url.replace(a, b), init),
        } as const
        const spa: oauth.Client = { client_id: DEMO_SPA.id }
        const api = (base: string, token: string) =>
          fetch(`${base}/v1/orders`, { headers: { authorization: `Bearer ${token}` } })

        // The interaction a's /authorize made is known to b's pages too, in the browser that
        // started it (its cookie from a: cookies know no port, so a browser sends it to b too).
        const verifier = oauth.generateRandomCodeVerifier()
        const authorize = new URL(`${a}/authorize`)
        authorize.search = new URLSearchParams({
          client_id: DEMO_SPA.id,
          redirect_uri: DEMO_SPA.redirectUri,
          response_type: 'code',
          scope: 'openid profile offline_access read:orders',
          state: 'state-1',
          nonce: 'nonce-1',
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        }).toString()
        const browser = new Browser()
        const peek = await browser.get(authorize.href)
        const onOther = await browser.get((peek.headers.get('location') ?? '').replace(a, b))
        expect(onOther.status).toBe(200)

        // The user signs in on a; the code is redeemed on b.
        const { callback } = await throughPages(authorize)
        const params = oauth.validateAuthResponse(as, spa, callback, 'state-1')
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          spa,
          oauth.None(),
          params,
          DEMO_SPA.redirectUri,
          verifier,
          onB,
        )
        const tokens = await oauth.processAuthorizationCodeResponse(as, spa, response, {
          expectedNonce: 'nonce-1',
          requireIdToken: true,
        })
        // Signed by b with the shared key: it verifies against a's JWKS.
        await oauth.validateApplicationLevelSignature(as, response, {
          [oauth.allowInsecureRequests]: true,
        })
        expect(oauth.getValidatedIdTokenClaims(tokens)?.sub).toBe('ada')
        expect((await api(a, tokens.access_token)).status).toBe(200)
        expect((await api(b, tokens.access_token)).status).toBe(200)

        // A refresh on a rotates the token b issued; the old one presented to b is a reuse.
        const refreshed = await oauth.processRefreshTokenResponse(
          as,
          spa,
          await oauth.refreshTokenGrantRequest(
            as,
            spa,
            oauth.None(),
            tokens.refresh_token as string,
            {
              [oauth.allowInsecureRequests]: true,
            },
          ),
        )
        expect((await api(b, refreshed.access_token)).status).toBe(200)
        const reuse = await oauth.refreshTokenGrantRequest(
          as,
          spa,
          oauth.None(),
          tokens.refresh_token as string,
          onB,
        )
        expect(reuse.status).toBe(400)
        expect((await reuse.json()).error).toBe('invalid_grant')
        // The family is revoked everywhere.
        expect((await api(a, refreshed.access_token)).status).toBe(401)
        expect((await api(b, refreshed.access_token)).status).toBe(401)

        // Revocation on b takes effect on a at once.
        const backend: oauth.Client = { client_id: DEMO_BACKEND.id }
        const auth = oauth.ClientSecretBasic(DEMO_BACKEND.secret)
        const machine = await oauth.processClientCredentialsResponse(
          as,
          backend,
          await oauth.clientCredentialsGrantRequest(
            as,
            backend,
            auth,
            new URLSearchParams({ scope: 'read:orders' }),
            { [oauth.allowInsecureRequests]: true },
          ),
        )
        expect((await api(b, machine.access_token)).status).toBe(200)
        await oauth.processRevocationResponse(
          await oauth.revocationRequest(as, backend, auth, machine.access_token, onB),
        )
        expect((await api(a, machine.access_token)).status).toBe(401)
      })
    },
  )
}
