// The authorisation server of @api-blocks/oauth on PostgresOAuthStore, end to end through its
// endpoints: the code flow with PKCE, a replayed code revoking what the first exchange issued,
// refresh rotation and reuse detection, client credentials, revocation; on PGlite and, when
// DATABASE_URL is set, on a server pool.
import type { AuthorizationServer } from '@api-blocks/oauth'
import { createAuthorizationServer, hashClientSecret } from '@api-blocks/oauth'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { migrate } from '../src/migrations.ts'
import { PostgresOAuthStore } from '../src/oauth-store.ts'
import type { Queryable } from '../src/queryable.ts'
import { backends, dropSchema, testSchema } from './databases.ts'

const ISSUER = 'https://as.example'
const REDIRECT = 'https://spa.example/cb'
const SECRET = 'backend-secret'
// RFC 7636 Appendix B.
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

const form = (path: string, fields: Record<string, string>, headers = {}) =>
  new Request(`${ISSUER}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  })
const basic = `Basic ${btoa(`backend:${SECRET}`)}`

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`the authorisation server on ${backend.title}`, () => {
    const schema = testSchema()
    let db: Queryable
    let close: () => Promise<void>
    let server: AuthorizationServer
    let now = Date.UTC(2026, 10, 25, 12)

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
      await migrate(db, { schema })
      server = createAuthorizationServer({
        issuer: ISSUER,
        clients: [
          {
            id: 'spa',
            public: true,
            redirectUris: [REDIRECT],
            grantTypes: ['authorization_code', 'refresh_token'],
            scopes: ['openid', 'offline_access', 'read:orders'],
          },
          {
            id: 'backend',
            secretHashes: [await hashClientSecret(SECRET)],
            grantTypes: ['client_credentials'],
            scopes: ['read:orders'],
          },
        ],
        interactionUrl: (id) => `${ISSUER}/login?interaction=${id}`,
        store: new PostgresOAuthStore({ db, schema }),
        clock: () => now,
      })
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      await dropSchema(db, schema)
      await close()
    })

    const code = async () => {
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: 'spa',
        redirect_uri: REDIRECT,
        scope: 'openid offline_access read:orders',
        state: 's-1',
        nonce: 'n-1',
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
      })
      const authorized = await server.authorize(new Request(`${ISSUER}/authorize?${query}`))
      expect(authorized.status).toBe(303)
      const location = authorized.headers.get('location') ?? ''
      const id = new URL(location).searchParams.get('interaction') ?? ''
      // The browser sends back the binding cookie /authorize set.
      const cookie = (authorized.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
      const page = new Request(location, { headers: { cookie } })
      expect(await server.interaction(id, new Request(location))).toBeUndefined()
      const details = await server.interaction(id, page)
      expect(details?.scopes).toEqual(['openid', 'offline_access', 'read:orders'])
      const done = await server.completeInteraction(
        id,
        { subject: 'user-ada', scopes: details?.scopes ?? [] },
        page,
      )
      // Taken: the interaction completes once.
      expect(await server.interaction(id, page)).toBeUndefined()
      return new URL(done.headers.get('location') ?? '').searchParams.get('code') ?? ''
    }
    const exchange = (value: string) =>
      server.token(
        form('/token', {
          grant_type: 'authorization_code',
          code: value,
          redirect_uri: REDIRECT,
          code_verifier: VERIFIER,
          client_id: 'spa',
        }),
      )
    const refresh = (token: string) =>
      server.token(
        form('/token', { grant_type: 'refresh_token', refresh_token: token, client_id: 'spa' }),
      )
    const tokens = async (response: Response) => {
      expect(response.status).toBe(200)
      return (await response.json()) as { access_token: string; refresh_token: string }
    }
    const active = async (token: string) => (await server.introspectToken(token)).active

    test('code flow: the tokens are active; a replayed code MUST be refused and revoke them', async () => {
      const value = await code()
      const issued = await tokens(await exchange(value))
      expect(await server.introspectToken(issued.access_token)).toMatchObject({
        active: true,
        sub: 'user-ada',
        client_id: 'spa',
        scope: 'openid offline_access read:orders',
      })
      const replay = await exchange(value)
      expect(replay.status).toBe(400)
      expect(await replay.json()).toMatchObject({ error: 'invalid_grant' })
      expect(await active(issued.access_token)).toBe(false)
      expect(await active(issued.refresh_token)).toBe(false)
    })

    test('refresh rotation: the new pair is active; the old refresh token reused MUST revoke the family', async () => {
      const first = await tokens(await exchange(await code()))
      now += 1_000
      const second = await tokens(await refresh(first.refresh_token))
      expect(await active(second.access_token)).toBe(true)
      expect(await active(first.refresh_token)).toBe(false)
      now += 1_000
      const reused = await refresh(first.refresh_token)
      expect(reused.status).toBe(400)
      expect(await active(second.access_token)).toBe(false)
      expect((await refresh(second.refresh_token)).status).toBe(400)
    })

    test('client credentials, then revocation of the access token at the endpoint', async () => {
      const issued = await server.token(
        form(
          '/token',
          { grant_type: 'client_credentials', scope: 'read:orders' },
          {
            authorization: basic,
          },
        ),
      )
      const { access_token } = (await issued.json()) as { access_token: string }
      expect(await server.introspectToken(access_token)).toMatchObject({
        active: true,
        client_id: 'backend',
      })
      const revoked = await server.revoke(
        form('/oauth/revoke', { token: access_token }, { authorization: basic }),
      )
      expect(revoked.status).toBe(200)
      expect(await active(access_token)).toBe(false)
    })
  })
}
