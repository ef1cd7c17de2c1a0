import { describe, expect, test } from 'vitest'
import { ISSUER, makeServer, SPA_REDIRECT, startInteraction } from '../test/kit.ts'

type Harness = Awaited<ReturnType<typeof makeServer>>

async function begin(harness: Harness, changes = {}) {
  const started = await startInteraction(harness, changes)
  const location = new URL(started.page.url)
  expect(location.origin + location.pathname).toBe(`${ISSUER}/login`)
  return started
}

/** The login page's request of another browser: the id, no cookie or a forged one. */
function elsewhere(started: { id: string; page: Request }, cookie?: string): Request {
  return new Request(started.page.url, cookie === undefined ? {} : { headers: { cookie } })
}

describe('the interaction hand-off', () => {
  test('interaction() shows the client, the scopes asked, the resource and the redirect URI', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness)
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(await harness.server.interaction(id, page)).toEqual({
      id,
      client: { id: 'demo-spa', name: 'Demo SPA' },
      scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders'],
      resource: ISSUER,
      redirectUri: SPA_REDIRECT,
      expiresAt: harness.clock.now + 600_000,
    })
  })

  test('completes once: a second completion gets the error page', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness)
    const first = await harness.server.completeInteraction(
      id,
      { subject: 'user-ada', scopes: ['openid'] },
      page,
    )
    expect(first.status).toBe(303)
    const location = new URL(first.headers.get('location')!)
    expect(location.origin + location.pathname).toBe(SPA_REDIRECT)
    expect([...location.searchParams.keys()].sort()).toEqual(['code', 'iss', 'state'])
    const second = await harness.server.completeInteraction(
      id,
      { subject: 'user-ada', scopes: ['openid'] },
      page,
    )
    expect(second.status).toBe(400)
    expect(second.headers.get('location')).toBeNull()
    expect(await harness.server.interaction(id, page)).toBeUndefined()
  })

  test('concurrent completions: exactly one code', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness)
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        harness.server.completeInteraction(id, { subject: 'user-ada', scopes: ['openid'] }, page),
      ),
    )
    expect(results.filter((response) => response.status === 303)).toHaveLength(1)
  })

  test('approving no scope at all is a refusal: access_denied (RFC 6749 §4.1.2.1)', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness)
    const response = await harness.server.completeInteraction(
      id,
      { subject: 'user-ada', scopes: [] },
      page,
    )
    expect(response.status).toBe(303)
    const location = new URL(response.headers.get('location')!)
    expect(location.searchParams.get('error')).toBe('access_denied')
    expect(location.searchParams.get('state')).toBe('state-123')
    expect(location.searchParams.has('code')).toBe(false)
    expect(await harness.server.interaction(id, page)).toBeUndefined()
  })

  test('approving a scope that was not asked is the host bug: TypeError, and the interaction survives', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness)
    await expect(
      harness.server.completeInteraction(
        id,
        { subject: 'user-ada', scopes: ['write:orders'] },
        page,
      ),
    ).rejects.toThrow(TypeError)
    await expect(
      harness.server.completeInteraction(id, { subject: '', scopes: [] }, page),
    ).rejects.toThrow(TypeError)
    expect(await harness.server.interaction(id, page)).toBeDefined()
  })

  test('expires after 10 minutes by default', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness)
    harness.clock.advance(600_000)
    expect(await harness.server.interaction(id, page)).toBeUndefined()
    expect(
      (await harness.server.completeInteraction(id, { subject: 'u', scopes: ['openid'] }, page))
        .status,
    ).toBe(400)
  })

  test('denyInteraction: access_denied with state and iss, once', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness)
    const response = await harness.server.denyInteraction(id, page)
    expect(response.status).toBe(303)
    const location = new URL(response.headers.get('location')!)
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'access_denied',
      error_description: expect.any(String),
      state: 'state-123',
      iss: ISSUER,
    })
    expect((await harness.server.denyInteraction(id, page)).status).toBe(400)
    expect(harness.events).toContainEqual({
      type: 'authorization_denied',
      code: 'ACCESS_DENIED',
      clientId: 'demo-spa',
    })
  })

  test('unknown and malformed ids', async () => {
    const harness = await makeServer()
    const { page } = await begin(harness)
    expect(await harness.server.interaction('nope', page)).toBeUndefined()
    expect(await harness.server.interaction('A'.repeat(22), page)).toBeUndefined()
    expect((await harness.server.denyInteraction('<script>', page)).status).toBe(400)
  })
})

describe('the interaction is bound to the browser that started it (RFC 9700 §4.7)', () => {
  test('/authorize MUST set an HttpOnly, SameSite=Lax, Secure cookie named after the interaction, living as long', async () => {
    const harness = await makeServer()
    const { id, setCookie } = await begin(harness)
    const [pair, ...attributes] = setCookie.split('; ')
    expect(pair).toMatch(new RegExp(`^oauth_interaction_${id}=[A-Za-z0-9_-]{43}$`))
    expect(attributes.sort()).toEqual([
      'HttpOnly',
      'Max-Age=600',
      'Path=/',
      'SameSite=Lax',
      'Secure',
    ])
  })

  test('the cookie path is the issuer path; no Secure over http (loopback)', async () => {
    const harness = await makeServer({
      issuer: 'http://127.0.0.1:3000/auth',
      interactionUrl: (id) => `http://127.0.0.1:3000/auth/login?interaction=${id}`,
    })
    const response = await harness.server.authorize(
      new Request(
        `http://127.0.0.1:3000/auth/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: 'demo-spa',
          redirect_uri: SPA_REDIRECT,
          scope: 'read:orders',
          state: 's',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
      ),
    )
    const attributes = response.headers.get('set-cookie')!.split('; ').slice(1).sort()
    expect(attributes).toEqual(['HttpOnly', 'Max-Age=600', 'Path=/auth', 'SameSite=Lax'])
  })

  test('another browser (no cookie) MUST NOT see, complete or refuse the interaction', async () => {
    const harness = await makeServer()
    const started = await begin(harness)
    const other = elsewhere(started)
    expect(await harness.server.interaction(started.id, other)).toBeUndefined()
    const completed = await harness.server.completeInteraction(
      started.id,
      { subject: 'user-mallory', scopes: ['openid'] },
      other,
    )
    expect(completed.status).toBe(400)
    expect(completed.headers.get('location')).toBeNull()
    expect((await harness.server.denyInteraction(started.id, other)).status).toBe(400)
    // The real browser still can.
    expect(await harness.server.interaction(started.id, started.page)).toBeDefined()
  })

  test('a forged or another interaction’s cookie MUST be refused', async () => {
    const harness = await makeServer()
    const started = await begin(harness)
    const second = await begin(harness)
    const forged = `oauth_interaction_${started.id}=${'A'.repeat(43)}`
    const swapped = `oauth_interaction_${started.id}=${second.cookie.split('=')[1]}`
    for (const cookie of [forged, swapped, second.cookie, `${started.cookie}x`]) {
      expect(
        await harness.server.interaction(started.id, elsewhere(started, cookie)),
      ).toBeUndefined()
    }
    // Among other cookies, the right one is found.
    const crowded = elsewhere(started, `a=1; ${second.cookie}; ${started.cookie}; b=2`)
    expect(await harness.server.interaction(started.id, crowded)).toBeDefined()
  })

  test('completing and denying clear the cookie (Max-Age=0)', async () => {
    const harness = await makeServer()
    for (const finish of ['complete', 'deny'] as const) {
      const { id, page } = await begin(harness)
      const response =
        finish === 'complete'
          ? await harness.server.completeInteraction(
              id,
              { subject: 'user-ada', scopes: ['openid'] },
              page,
            )
          : await harness.server.denyInteraction(id, page)
      expect(response.status).toBe(303)
      const cleared = response.headers.get('set-cookie')!
      expect(cleared).toMatch(new RegExp(`^oauth_interaction_${id}=;`))
      expect(cleared).toContain('Max-Age=0')
    }
  })
})

describe('prompt, max_age and login_hint (OpenID Connect Core §3.1.2.1)', () => {
  test('are carried to the login page', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness, {
      prompt: 'login consent',
      max_age: '300',
      login_hint: 'ada@example.com',
    })
    expect(await harness.server.interaction(id, page)).toMatchObject({
      prompt: ['login', 'consent'],
      maxAge: 300,
      loginHint: 'ada@example.com',
    })
  })

  test.each([
    ['an unknown prompt value', { prompt: 'login sideways' }],
    ['none with another value', { prompt: 'none login' }],
    ['a max_age that is not a number', { max_age: '-1' }],
    ['a max_age with a fraction', { max_age: '1.5' }],
  ])('%s MUST be refused with invalid_request', async (_name, changes) => {
    const harness = await makeServer()
    const response = await harness.server.authorize(
      new Request(
        `${ISSUER}/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: 'demo-spa',
          redirect_uri: SPA_REDIRECT,
          scope: 'read:orders',
          state: 's',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
          ...changes,
        })}`,
      ),
    )
    expect(response.status).toBe(303)
    expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe(
      'invalid_request',
    )
  })

  test('an authentication older than max_age MUST NOT give a code: login_required', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness, { max_age: '60' })
    const now = Math.floor(harness.clock.now / 1000)
    const response = await harness.server.completeInteraction(
      id,
      { subject: 'user-ada', scopes: ['openid'], authTime: now - 61 },
      page,
    )
    const location = new URL(response.headers.get('location')!)
    expect(location.searchParams.get('error')).toBe('login_required')
    expect(location.searchParams.has('code')).toBe(false)
  })

  test('an authentication within max_age gives a code', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness, { max_age: '60' })
    const now = Math.floor(harness.clock.now / 1000)
    const response = await harness.server.completeInteraction(
      id,
      { subject: 'user-ada', scopes: ['openid'], authTime: now - 60 },
      page,
    )
    expect(new URL(response.headers.get('location')!).searchParams.has('code')).toBe(true)
  })

  test('prompt=login with an authentication from before the request: login_required', async () => {
    const harness = await makeServer()
    const { id, page } = await begin(harness, { prompt: 'login' })
    const now = Math.floor(harness.clock.now / 1000)
    const response = await harness.server.completeInteraction(
      id,
      { subject: 'user-ada', scopes: ['openid'], authTime: now - 1 },
      page,
    )
    expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe(
      'login_required',
    )
  })
})
