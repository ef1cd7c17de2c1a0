import { describe, expect, test } from 'vitest'
import { BACKEND_SECRET, basic, exchange, json, makeServer, obtainCode, post } from '../test/kit.ts'

type Harness = Awaited<ReturnType<typeof makeServer>>

async function start(harness: Harness, scope?: string) {
  const { code } = await obtainCode(harness, scope === undefined ? {} : { scope })
  return json(await exchange(harness, code))
}

function refresh(harness: Harness, token: string, extra: Record<string, string> = {}) {
  return harness.server.token(
    post('/token', {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: 'demo-spa',
      ...extra,
    }),
  )
}

describe('the refresh token grant', () => {
  test('a wider scope MUST be refused with invalid_scope and spends nothing', async () => {
    const harness = await makeServer()
    const first = await start(harness)
    const token = first['refresh_token'] as string
    expect(
      await json(
        await refresh(harness, token, { scope: 'openid offline_access read:orders write:orders' }),
      ),
    ).toMatchObject({ error: 'invalid_scope' })
    // The same scope in another order is fine, and the refused request spent nothing.
    const same = await refresh(harness, token, {
      scope: 'read:orders offline_access openid email profile',
    })
    expect(same.status).toBe(200)
    expect((await json(same))['scope']).toBe('openid profile email offline_access read:orders')
  })

  test('a narrower scope MAY be asked (RFC 6749 §6): the access token carries only it, the refresh token keeps the grant', async () => {
    const harness = await makeServer()
    const first = await start(harness)
    const response = await refresh(harness, first['refresh_token'] as string, {
      scope: 'read:orders',
    })
    expect(response.status).toBe(200)
    const narrowed = await json(response)
    expect(narrowed['scope']).toBe('read:orders')
    expect(await harness.server.introspectToken(narrowed['access_token'] as string)).toMatchObject({
      active: true,
      scope: 'read:orders',
    })
    // No openid in the token: UserInfo refuses it.
    const userinfo = await harness.server.userinfo(
      new Request('https://as.example.com/userinfo', {
        headers: { authorization: `Bearer ${narrowed['access_token']}` },
      }),
    )
    expect(userinfo.status).toBe(403)
    // The next refresh without scope gets the whole grant again.
    const again = await json(await refresh(harness, narrowed['refresh_token'] as string))
    expect(again['scope']).toBe('openid profile email offline_access read:orders')
  })

  test('a narrower scope shows in a JWT access token’s scope claim', async () => {
    const harness = await makeServer({
      resources: [{ identifier: 'https://api.example.com/', accessTokenFormat: 'jwt' }],
    })
    const first = await start(harness)
    const narrowed = await json(
      await refresh(harness, first['refresh_token'] as string, { scope: 'read:orders' }),
    )
    const payload = JSON.parse(
      atob(
        (narrowed['access_token'] as string).split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'),
      ),
    ) as Record<string, unknown>
    expect(payload['scope']).toBe('read:orders')
    expect(await harness.server.introspectToken(narrowed['access_token'] as string)).toMatchObject({
      active: true,
      scope: 'read:orders',
    })
  })

  test("another client's refresh token MUST be refused, and is not spent", async () => {
    const harness = await makeServer()
    const first = await start(harness)
    const stolen = await harness.server.token(
      post(
        '/token',
        { grant_type: 'refresh_token', refresh_token: first['refresh_token'] as string },
        {
          authorization: basic('demo-backend', BACKEND_SECRET),
        },
      ),
    )
    expect(await json(stolen)).toMatchObject({ error: 'invalid_grant' })
    expect((await refresh(harness, first['refresh_token'] as string)).status).toBe(200)
  })

  test('another resource MUST be refused with invalid_target (RFC 8707 §2.2)', async () => {
    const harness = await makeServer()
    const first = await start(harness)
    const token = first['refresh_token'] as string
    expect(
      await json(await refresh(harness, token, { resource: 'https://other.example.com/' })),
    ).toMatchObject({ error: 'invalid_target' })
    expect((await refresh(harness, token, { resource: 'https://as.example.com' })).status).toBe(200)
  })

  test('an access token is not a refresh token', async () => {
    const harness = await makeServer()
    const first = await start(harness)
    expect(await json(await refresh(harness, first['access_token'] as string))).toMatchObject({
      error: 'invalid_grant',
    })
  })

  test('no offline_access, no refresh token', async () => {
    const harness = await makeServer()
    const tokens = await start(harness, 'openid read:orders')
    expect(tokens).not.toHaveProperty('refresh_token')
  })

  test('the grant never outlives its first refresh TTL: rotation does not extend it', async () => {
    const day = 86_400_000
    const harness = await makeServer({ ttl: { refreshToken: 86_400 } })
    let tokens = await start(harness)
    harness.clock.advance(day / 2)
    tokens = await json(await refresh(harness, tokens['refresh_token'] as string))
    harness.clock.advance(day / 2)
    const late = await refresh(harness, tokens['refresh_token'] as string)
    expect(await json(late)).toMatchObject({ error: 'invalid_grant' })
  })

  test('an access token never outlives its grant', async () => {
    const harness = await makeServer({ ttl: { refreshToken: 86_400, accessToken: 3600 } })
    let tokens = await start(harness)
    harness.clock.advance(86_400_000 - 600_000)
    tokens = await json(await refresh(harness, tokens['refresh_token'] as string))
    expect(tokens['expires_in']).toBe(600)
  })

  test.each([
    ['malformed', 'not-a-token'],
    ['unknown', `${'A'.repeat(22)}.${'A'.repeat(43)}`],
  ])('a %s refresh token is invalid_grant', async (_name, token) => {
    const harness = await makeServer()
    expect(await json(await refresh(harness, token))).toMatchObject({ error: 'invalid_grant' })
  })
})
