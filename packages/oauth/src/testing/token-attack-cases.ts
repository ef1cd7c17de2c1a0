/**
 * The RFC 9700 attack table at the token endpoint: PKCE downgrade and omission, code replay
 * (revoking what the code issued), stolen codes, mismatched redirect URIs and resources,
 * expired codes, refused grants and duplicated parameters.
 *
 * @module
 */
import { expect } from 'vitest'
import type { ServerSuiteContext } from './server-context.ts'
import {
  authorizeQuery,
  authorizeRequest,
  BACKEND_SECRET,
  basic,
  exchange,
  json,
  obtainCode,
  post,
  SPA_REDIRECT,
} from './server-kit.ts'

/** Registers the token-endpoint attacks. */
export function tokenAttackCases({ it }: ServerSuiteContext): void {
  it('PKCE downgrade: a verifier for a code whose request had no challenge cannot happen, since such a request MUST be refused at /authorize', async (makeServer) => {
    const { server, store } = await makeServer()
    const saved: unknown[] = []
    const spy = store.saveInteraction.bind(store)
    store.saveInteraction = async (interaction) => {
      saved.push(interaction)
      return spy(interaction)
    }
    const response = await server.authorize(
      authorizeRequest(
        authorizeQuery({ code_challenge: undefined, code_challenge_method: undefined }),
      ),
    )
    expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe(
      'invalid_request',
    )
    expect(saved).toEqual([])
  })

  it('a token request without code_verifier MUST be refused', async (makeServer) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const response = await exchange(harness, code, { code_verifier: undefined })
    expect(response.status).toBe(400)
    expect(await json(response)).toMatchObject({ error: 'invalid_request' })
  })

  it('a wrong code_verifier MUST be refused, and the code is spent', async (makeServer) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const wrong = await exchange(harness, code, { code_verifier: 'a'.repeat(43) })
    expect(await json(wrong)).toMatchObject({ error: 'invalid_grant' })
    const right = await exchange(harness, code)
    expect(await json(right)).toMatchObject({ error: 'invalid_grant' })
  })

  it('a replayed code MUST be refused and SHOULD revoke the tokens it issued (RFC 6749 §4.1.2)', async (makeServer) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const first = await json(await exchange(harness, code))
    expect(await harness.server.introspectToken(first['access_token'] as string)).toMatchObject({
      active: true,
    })
    const replay = await exchange(harness, code)
    expect(replay.status).toBe(400)
    expect(await json(replay)).toMatchObject({ error: 'invalid_grant' })
    expect(await harness.server.introspectToken(first['access_token'] as string)).toEqual({
      active: false,
    })
    const refresh = await harness.server.token(
      post('/token', {
        grant_type: 'refresh_token',
        refresh_token: first['refresh_token'] as string,
        client_id: 'demo-spa',
      }),
    )
    expect(await json(refresh)).toMatchObject({ error: 'invalid_grant' })
    expect(harness.events.filter((event) => event.type === 'code_replayed')).toEqual([
      {
        type: 'code_replayed',
        code: 'INVALID_GRANT',
        clientId: 'demo-spa',
        familyId: expect.any(String),
      },
    ])
  })

  it('a code presented by another client MUST be refused, and is spent', async (makeServer) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const stolen = await harness.server.token(
      post(
        '/token',
        {
          grant_type: 'authorization_code',
          code,
          redirect_uri: SPA_REDIRECT,
          code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
        },
        { authorization: basic('demo-backend', BACKEND_SECRET) },
      ),
    )
    expect(await json(stolen)).toMatchObject({ error: 'invalid_grant' })
    expect(await json(await exchange(harness, code))).toMatchObject({ error: 'invalid_grant' })
  })

  for (const [name, redirectUri] of [
    ['another redirect_uri', 'http://127.0.0.1:5173/other'],
    ['a trailing slash', `${SPA_REDIRECT}/`],
  ] as const) {
    it(`a code with ${name} at the token endpoint MUST be refused`, async (makeServer) => {
      const harness = await makeServer()
      const { code } = await obtainCode(harness)
      expect(
        await json(await exchange(harness, code, { redirect_uri: redirectUri })),
      ).toMatchObject({ error: 'invalid_grant' })
    })
  }

  it('a code exchanged for another resource MUST be refused with invalid_target (RFC 8707)', async (makeServer) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const response = await exchange(harness, code, { resource: 'https://other.example.com/' })
    expect(await json(response)).toMatchObject({ error: 'invalid_target' })
  })

  it('a code without redirect_uri at the token endpoint MUST be refused', async (makeServer) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    expect(await json(await exchange(harness, code, { redirect_uri: undefined }))).toMatchObject({
      error: 'invalid_request',
    })
  })

  it('an expired code MUST be refused (60 s by default)', async (makeServer) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    harness.clock.advance(60_000)
    expect(await json(await exchange(harness, code))).toMatchObject({ error: 'invalid_grant' })
  })

  it('a code still within its 60 s is exchanged', async (makeServer) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    harness.clock.advance(59_999)
    expect((await exchange(harness, code)).status).toBe(200)
  })

  const grants: readonly (readonly [string, Record<string, string>])[] = [
    ['password', { grant_type: 'password', username: 'ada', password: 'lovelace' }],
    ['implicit', { grant_type: 'implicit' }],
    [
      'device code',
      { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'x' },
    ],
  ]
  for (const [name, form] of grants) {
    it(`the ${name} grant MUST be refused with unsupported_grant_type`, async (makeServer) => {
      const { server } = await makeServer()
      const response = await server.token(
        post('/token', form, { authorization: basic('demo-backend', BACKEND_SECRET) }),
      )
      expect(response.status).toBe(400)
      expect(await json(response)).toMatchObject({ error: 'unsupported_grant_type' })
    })
  }

  it('a duplicated parameter at the token endpoint MUST be refused', async (makeServer) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const response = await harness.server.token(
      post(
        '/token',
        `grant_type=authorization_code&code=${code}&code=${code}&redirect_uri=${encodeURIComponent(SPA_REDIRECT)}&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk&client_id=demo-spa`,
      ),
    )
    expect(await json(response)).toMatchObject({ error: 'invalid_request' })
    // The code was not consumed by the refused request.
    expect((await exchange(harness, code)).status).toBe(200)
  })
}
