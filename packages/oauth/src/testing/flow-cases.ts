/**
 * The protocol flow through the endpoints: the code flow with PKCE (RFC 7636 Appendix B) to an
 * ID token and a refresh token, client credentials, and refresh-token rotation with reuse
 * detection, also under concurrent refreshes (RFC 9700 §4.14.2).
 *
 * @module
 */
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { expect } from 'vitest'
import type { ServerSuiteContext } from './server-context.ts'
import type { Harness } from './server-kit.ts'
import {
  BACKEND_SECRET,
  basic,
  exchange,
  ISSUER,
  json,
  obtainCode,
  post,
  refresh,
  SPA_REDIRECT,
} from './server-kit.ts'

/** Runs the code flow of demo-spa: the token response. */
async function start(harness: Harness): Promise<Record<string, unknown>> {
  const { code } = await obtainCode(harness)
  return json(await exchange(harness, code))
}

/** Registers the code flow and client credentials. */
export function flowCases({ it }: ServerSuiteContext): void {
  it('authorize -> interaction -> code -> tokens with an ID token and a refresh token', async (makeServer) => {
    const harness = await makeServer()
    const { code, redirect } = await obtainCode(harness)
    expect(redirect.origin + redirect.pathname).toBe(SPA_REDIRECT)
    expect(redirect.searchParams.get('state')).toBe('state-123')
    expect(redirect.searchParams.get('iss')).toBe(ISSUER)
    const response = await exchange(harness, code)
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const body = await json(response)
    expect(body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'openid profile email offline_access read:orders',
    })
    expect(body['access_token']).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/)
    expect(body['refresh_token']).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/)
    const idToken = body['id_token'] as string
    expect(decodeProtectedHeader(idToken)).toMatchObject({ alg: 'ES256', typ: 'JWT' })
    expect(decodeJwt(idToken)).toMatchObject({
      iss: ISSUER,
      sub: 'user-ada',
      aud: 'demo-spa',
      nonce: 'nonce-456',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      email_verified: true,
      auth_time: Math.floor(harness.clock.now / 1000),
    })
    const introspection = await harness.server.introspectToken(body['access_token'] as string)
    expect(introspection).toEqual({
      active: true,
      scope: 'openid profile email offline_access read:orders',
      client_id: 'demo-spa',
      username: 'ada',
      sub: 'user-ada',
      aud: ISSUER,
      iss: ISSUER,
      exp: Math.floor(harness.clock.now / 1000) + 900,
      iat: Math.floor(harness.clock.now / 1000),
      token_type: 'Bearer',
      jti: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      auth_time: Math.floor(harness.clock.now / 1000),
    })
  })

  it('client credentials', async (makeServer) => {
    const harness = await makeServer()
    const response = await harness.server.token(
      post(
        '/token',
        { grant_type: 'client_credentials', scope: 'read:orders' },
        {
          authorization: basic('demo-backend', BACKEND_SECRET),
        },
      ),
    )
    expect(response.status).toBe(200)
    const body = await json(response)
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'read:orders', expires_in: 900 })
    expect(body).not.toHaveProperty('refresh_token')
    const introspection = await harness.server.introspectToken(body['access_token'] as string)
    expect(introspection).toMatchObject({
      active: true,
      sub: 'demo-backend',
      client_id: 'demo-backend',
    })
    expect(introspection).not.toHaveProperty('username')
  })
}

/** Registers refresh-token rotation and reuse detection. */
export function refreshCases({ it }: ServerSuiteContext): void {
  it('every use rotates: a new refresh token and a new access token, same scope', async (makeServer) => {
    const harness = await makeServer()
    const first = await start(harness)
    harness.clock.advance(1000)
    const response = await refresh(harness, first['refresh_token'] as string)
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const second = await json(response)
    expect(second['refresh_token']).not.toBe(first['refresh_token'])
    expect(second['access_token']).not.toBe(first['access_token'])
    expect(second['scope']).toBe(first['scope'])
    expect(second).not.toHaveProperty('id_token')
    expect(harness.events).toContainEqual(
      expect.objectContaining({ type: 'refresh_token_rotated' }),
    )
  })

  it('a rotated token presented again MUST revoke the family (RFC 9700 §4.14.2)', async (makeServer) => {
    const harness = await makeServer()
    const first = await start(harness)
    const second = await json(await refresh(harness, first['refresh_token'] as string))
    const reuse = await refresh(harness, first['refresh_token'] as string)
    expect(reuse.status).toBe(400)
    expect(await json(reuse)).toMatchObject({ error: 'invalid_grant' })
    expect(harness.events).toContainEqual(
      expect.objectContaining({ type: 'refresh_token_reused', clientId: 'demo-spa' }),
    )
    // The successor and its access token are revoked too.
    expect(await json(await refresh(harness, second['refresh_token'] as string))).toMatchObject({
      error: 'invalid_grant',
    })
    expect(await harness.server.introspectToken(second['access_token'] as string)).toEqual({
      active: false,
    })
  })

  it('within the grace window a reuse is refused but revokes nothing', async (makeServer) => {
    const harness = await makeServer({ refreshReuseGraceMs: 5000 })
    const first = await start(harness)
    const second = await json(await refresh(harness, first['refresh_token'] as string))
    harness.clock.advance(4000)
    expect(await json(await refresh(harness, first['refresh_token'] as string))).toMatchObject({
      error: 'invalid_grant',
    })
    expect((await refresh(harness, second['refresh_token'] as string)).status).toBe(200)
  })

  it('after the grace window a reuse revokes the family', async (makeServer) => {
    const harness = await makeServer({ refreshReuseGraceMs: 5000 })
    const first = await start(harness)
    const second = await json(await refresh(harness, first['refresh_token'] as string))
    harness.clock.advance(5001)
    await refresh(harness, first['refresh_token'] as string)
    expect(await json(await refresh(harness, second['refresh_token'] as string))).toMatchObject({
      error: 'invalid_grant',
    })
  })

  it('of concurrent refreshes with one token and no grace window, exactly one succeeds, and the race revokes the family, the winner’s new tokens with it (RFC 9700 §4.14.2)', async (makeServer) => {
    const harness = await makeServer()
    const first = await start(harness)
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => refresh(harness, first['refresh_token'] as string)),
    )
    const winners = responses.filter((response) => response.status === 200)
    expect(winners).toHaveLength(1)
    const winner = await json(winners[0]!)
    // The losers presented a rotated token: a reuse, which cannot be told from theft.
    expect(harness.events.filter((event) => event.type === 'refresh_token_reused')).toHaveLength(19)
    expect(await harness.server.introspectToken(winner['access_token'] as string)).toEqual({
      active: false,
    })
    expect(await json(await refresh(harness, winner['refresh_token'] as string))).toMatchObject({
      error: 'invalid_grant',
    })
  })

  it('with a grace window, concurrent refreshes leave the winner’s tokens active; the losers get invalid_grant and revoke nothing', async (makeServer) => {
    const harness = await makeServer({ refreshReuseGraceMs: 10_000 })
    const first = await start(harness)
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => refresh(harness, first['refresh_token'] as string)),
    )
    const winners = responses.filter((response) => response.status === 200)
    expect(winners).toHaveLength(1)
    for (const loser of responses.filter((response) => response.status !== 200)) {
      expect(loser.status).toBe(400)
      expect(await json(loser)).toMatchObject({ error: 'invalid_grant' })
    }
    expect(harness.events.some((event) => event.type === 'refresh_token_reused')).toBe(false)
    const winner = await json(winners[0]!)
    expect((await harness.server.introspectToken(winner['access_token'] as string)).active).toBe(
      true,
    )
    expect((await refresh(harness, winner['refresh_token'] as string)).status).toBe(200)
  })
}
