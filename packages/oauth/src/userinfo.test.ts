import { describe, expect, test } from 'vitest'
import {
  BACKEND_SECRET,
  basic,
  exchange,
  ISSUER,
  json,
  makeServer,
  obtainCode,
  post,
} from '../test/kit.ts'

type Harness = Awaited<ReturnType<typeof makeServer>>

async function accessToken(harness: Harness, changes: Record<string, string | undefined> = {}) {
  const { code } = await obtainCode(harness, changes)
  return (await json(await exchange(harness, code)))['access_token'] as string
}

function userinfo(harness: Harness, authorization?: string, method = 'GET') {
  return harness.server.userinfo(
    new Request(`${ISSUER}/userinfo`, {
      method,
      headers: authorization === undefined ? {} : { authorization },
    }),
  )
}

describe('the UserInfo endpoint (OpenID Connect Core §5.3)', () => {
  test('the claims the token scopes release, and sub', async () => {
    const harness = await makeServer()
    const token = await accessToken(harness, { scope: 'openid email read:orders' })
    for (const method of ['GET', 'POST']) {
      const response = await userinfo(harness, `Bearer ${token}`, method)
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toBe('no-store')
      expect(await response.json()).toEqual({
        sub: 'user-ada',
        email: 'ada@example.com',
        email_verified: true,
      })
    }
  })

  test('no token: 401 with a Bearer challenge and no error (RFC 6750 §3.1)', async () => {
    const harness = await makeServer()
    const response = await userinfo(harness)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="userinfo"')
  })

  test('a revoked token: 401 invalid_token', async () => {
    const harness = await makeServer()
    const token = await accessToken(harness)
    await harness.server.revoke(post('/oauth/revoke', { token, client_id: 'demo-spa' }))
    const response = await userinfo(harness, `Bearer ${token}`)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  test('a token without openid, or of a client acting for itself: 403 insufficient_scope', async () => {
    const harness = await makeServer()
    const noOpenid = await accessToken(harness, { scope: 'read:orders', nonce: undefined })
    expect((await userinfo(harness, `Bearer ${noOpenid}`)).status).toBe(403)
    const cc = await json(
      await harness.server.token(
        post(
          '/token',
          { grant_type: 'client_credentials' },
          { authorization: basic('demo-backend', BACKEND_SECRET) },
        ),
      ),
    )
    const response = await userinfo(harness, `Bearer ${cc['access_token'] as string}`)
    expect(response.status).toBe(403)
    expect(response.headers.get('www-authenticate')).toContain('error="insufficient_scope"')
  })

  test('a token anywhere but the Authorization field is not read; another scheme is a 400', async () => {
    const harness = await makeServer()
    const token = await accessToken(harness)
    const query = await harness.server.userinfo(
      new Request(`${ISSUER}/userinfo?access_token=${token}`),
    )
    expect(query.status).toBe(401)
    expect((await userinfo(harness, `Basic ${token}`)).status).toBe(400)
    expect((await userinfo(harness, 'Bearer a b')).status).toBe(400)
  })
})
