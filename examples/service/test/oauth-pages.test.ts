// The login and consent pages (src/auth/pages.ts) over HTTP, as a browser meets them: plain HTML
// forms with labels, every value escaped, CSRF-protected, framing and caching refused, a session
// cookie with the right attributes and a new id at sign-in, 303 after every POST.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createService } from '../src/app.ts'
import {
  Browser,
  browserOrigin,
  codeFlowTokens,
  DEMO_SPA,
  hiddenField,
  jwtClaims,
  throughPages,
} from './oauth-client.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStores } from './serve-on-stores.ts'

let running: RunningService
let base: string
beforeAll(async () => {
  running = await serveOnStores(
    {},
    { service: { rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }] } },
  )
  base = running.base
})
afterAll(() => running.close())

const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' // RFC 7636 Appendix B
function authorizeUrl(scope = 'openid profile read:orders'): string {
  return `${base}/authorize?${new URLSearchParams({
    client_id: DEMO_SPA.id,
    redirect_uri: DEMO_SPA.redirectUri,
    response_type: 'code',
    scope,
    state: 'state-1',
    nonce: 'nonce-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })}`
}

/** A browser on the login page of a fresh interaction. */
async function atLogin() {
  const browser = new Browser()
  const authorized = await browser.get(authorizeUrl())
  expect(authorized.status).toBe(303)
  const loginUrl = authorized.headers.get('location') ?? ''
  const page = await browser.get(loginUrl)
  const html = await page.clone().text()
  const fields = {
    interaction: hiddenField(html, 'interaction'),
    csrf: hiddenField(html, 'csrf'),
  }
  return { browser, loginUrl, page, html, fields }
}

const signIn = (
  browser: Browser,
  fields: { interaction: string; csrf: string },
  username = 'ada',
  password = 'lovelace',
  origin?: string,
) =>
  browser.post(
    `${base}/login`,
    [
      ['interaction', fields.interaction],
      ['csrf', fields.csrf],
      ['username', username],
      ['password', password],
    ],
    origin,
  )

function expectPageHeaders(response: Response): void {
  expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
  const csp = response.headers.get('content-security-policy') ?? ''
  expect(csp).toMatch(/default-src 'none'/)
  expect(csp).toMatch(/frame-ancestors 'none'/)
  expect(csp).toMatch(/form-action 'self'/)
  expect(csp).not.toMatch(/script-src|unsafe-inline/)
  expect(response.headers.get('x-frame-options')).toBe('DENY')
  expect(response.headers.get('cache-control')).toBe('no-store')
}

describe('the login page', () => {
  test('a plain HTML form with labelled fields, for a browser (Accept: text/html), framing and caching refused', async () => {
    const { page, html } = await atLogin()
    expect(page.status).toBe(200)
    expectPageHeaders(page)
    expect(html).toContain('<label for="username">')
    expect(html).toContain('id="username" name="username" autocomplete="username"')
    expect(html).toContain('<label for="password">')
    expect(html).toContain('type="password" id="password" name="password"')
    expect(html).toContain('<form method="post" action="login">')
    expect(html).not.toContain('<script')
    expect(html).toContain('Demo single-page app')
  })

  test('MUST: the session cookie is HttpOnly, SameSite=Lax, Path=/, with Max-Age (no Secure on http)', async () => {
    const { browser } = await atLogin()
    const cookie = browser.jar.setCookies.find((line) => line.startsWith('session='))
    expect(cookie).toMatch(
      /^session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/,
    )
  })

  test("MUST pass on /authorize's per-interaction cookie unchanged: without it the interaction is unknown to the pages", async () => {
    const { browser, loginUrl } = await atLogin()
    const id = new URL(loginUrl).searchParams.get('interaction') ?? ''
    const binding = browser.jar.setCookies.find((line) =>
      line.startsWith(`oauth_interaction_${id}=`),
    )
    expect(binding).toMatch(/; HttpOnly; SameSite=Lax$/)
    expect(binding).toMatch(/; Path=\/; /)
    // Another browser with the link (a phished login URL) gets no login form for it.
    const elsewhere = await fetch(loginUrl, {
      redirect: 'manual',
      headers: { accept: 'text/html' },
    })
    expect(elsewhere.status).toBe(400)
    expect(await elsewhere.text()).toContain('unknown or has expired')
  })

  test('signing in answers 303 to the consent page, with a new session id (no fixation)', async () => {
    const { browser, fields } = await atLogin()
    const before = browser.jar.cookies.get('session')
    const signedIn = await signIn(browser, fields)
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.get('location')).toBe(
      `${base}/consent?interaction=${encodeURIComponent(fields.interaction)}`,
    )
    const after = browser.jar.cookies.get('session')
    expect(after).toBeDefined()
    expect(after).not.toBe(before)
    // The id from before the sign-in opens nothing (the interaction's own cookie sent along).
    const binding = [...browser.jar.cookies].find(([name]) => name.startsWith('oauth_interaction_'))
    const stale = await fetch(signedIn.headers.get('location') ?? '', {
      redirect: 'manual',
      headers: { cookie: `session=${before}; ${binding?.[0]}=${binding?.[1]}` },
    })
    expect(stale.status).toBe(303)
    expect(stale.headers.get('location')).toMatch(/\/login\?interaction=/)
  })

  test('MUST NOT say which part was wrong: an unknown user and a wrong password get the same 401 page, the name escaped', async () => {
    const { browser, fields } = await atLogin()
    const wrong = await signIn(browser, fields, 'ada', 'wrong')
    expect(wrong.status).toBe(401)
    expectPageHeaders(wrong)
    const wrongPage = await wrong.text()
    expect(wrongPage).toContain('The user name or password is not right.')
    const hostile = '"><script>alert(1)</script>'
    const unknown = await signIn(browser, fields, hostile, 'lovelace')
    expect(unknown.status).toBe(401)
    const unknownPage = await unknown.text()
    expect(unknownPage).toContain('The user name or password is not right.')
    expect(unknownPage).not.toContain('<script>')
    expect(unknownPage).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"')
    // Still on the login form, which works: the right password then signs in.
    expect((await signIn(browser, fields)).status).toBe(303)
  })

  test('MUST refuse a forged form: no CSRF token, a wrong one, no session cookie, another Origin or a cross-site fetch', async () => {
    const { browser, fields } = await atLogin()
    const post = (fieldsOf: [string, string][], headers: Record<string, string>) =>
      fetch(`${base}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fieldsOf).toString(),
      })
    const cookie = browser.jar.header()
    // The interaction's cookie from /authorize without the session's.
    const bindingOnly = [...browser.jar.cookies]
      .filter(([name]) => name !== 'session')
      .map(([name, value]) => `${name}=${value}`)
      .join('; ')
    const credentials: [string, string][] = [
      ['interaction', fields.interaction],
      ['username', 'ada'],
      ['password', 'lovelace'],
    ]
    const cases: [string, [string, string][], Record<string, string>][] = [
      ['no token', credentials, { cookie }],
      ['a wrong token', [...credentials, ['csrf', `${fields.csrf.slice(1)}x`]], { cookie }],
      ['no session cookie', [...credentials, ['csrf', fields.csrf]], { cookie: bindingOnly }],
      [
        'another Origin',
        [...credentials, ['csrf', fields.csrf]],
        { cookie, origin: 'https://evil.example' },
      ],
      [
        'cross-site',
        [...credentials, ['csrf', fields.csrf]],
        { cookie, 'sec-fetch-site': 'cross-site' },
      ],
      [
        'Origin null without Fetch Metadata',
        [...credentials, ['csrf', fields.csrf]],
        { cookie, origin: 'null' },
      ],
      [
        'Origin null from another site',
        [...credentials, ['csrf', fields.csrf]],
        { cookie, origin: 'null', 'sec-fetch-site': 'same-site' },
      ],
    ]
    for (const [name, form, headers] of cases) {
      const response = await post(form, headers)
      expect(response.status, name).toBe(403)
      expect(response.headers.get('location'), name).toBeNull()
      await response.body?.cancel()
    }
    // No cookie at all: not even the interaction is known to this browser.
    const bare = await post([...credentials, ['csrf', fields.csrf]], {})
    expect(bare.status).toBe(400)
    expect(bare.headers.get('location')).toBeNull()
    await bare.body?.cancel()
  })

  test("MUST accept the POST a browser sends from the login page: the pages' Referrer-Policy keeps a same-origin Origin", async () => {
    const { page } = await atLogin()
    // Under no-referrer a browser would send Origin: null on the form's POST (Fetch §3.2).
    expect(page.headers.get('referrer-policy')).toBe('same-origin')
    expect(browserOrigin(base, page.headers.get('referrer-policy'), `${base}/login`)).toBe(
      new URL(base).origin,
    )
    expect(browserOrigin(base, 'no-referrer', `${base}/login`)).toBe('null')
  })

  test('MUST accept Origin: null when the browser says Sec-Fetch-Site: same-origin (a page whose policy hides its origin)', async () => {
    const { browser, fields } = await atLogin()
    const response = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: browser.jar.header(),
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'null',
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams([
        ['interaction', fields.interaction],
        ['csrf', fields.csrf],
        ['username', 'ada'],
        ['password', 'lovelace'],
      ]).toString(),
    })
    expect(response.status, await response.clone().text()).toBe(303)
    expect(response.headers.get('location')).toMatch(/\/consent\?interaction=/)
  })

  test('GET /login again in the same browser reuses its session: no new cookie, the same CSRF token', async () => {
    const { browser, loginUrl, fields } = await atLogin()
    const before = browser.jar.setCookies.length
    const again = await browser.get(loginUrl)
    expect(again.status).toBe(200)
    expect(again.headers.get('set-cookie')).toBeNull()
    expect(browser.jar.setCookies).toHaveLength(before)
    expect(hiddenField(await again.text(), 'csrf')).toBe(fields.csrf)
  })

  test('bad input is a 4xx page: an unknown interaction, a duplicated field, another media type, an oversized form', async () => {
    const { browser, fields } = await atLogin()
    for (const url of [
      `${base}/login?interaction=unknown`,
      `${base}/login`,
      `${base}/login?interaction=a&interaction=b`,
    ]) {
      const response = await browser.get(url)
      expect(response.status, url).toBe(400)
      expectPageHeaders(response)
      await response.body?.cancel()
    }
    const duplicated = await browser.post(`${base}/login`, [
      ['interaction', fields.interaction],
      ['csrf', fields.csrf],
      ['username', 'ada'],
      ['username', 'eve'],
      ['password', 'lovelace'],
    ])
    expect(duplicated.status).toBe(400)
    const json = await fetch(`${base}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: browser.jar.header() },
      body: JSON.stringify({ ...fields, username: 'ada', password: 'lovelace' }),
    })
    expect(json.status).toBe(415)
    const huge = await browser.post(`${base}/login`, [
      ['interaction', fields.interaction],
      ['csrf', fields.csrf],
      ['username', 'ada'],
      ['password', 'x'.repeat(9000)],
    ])
    expect(huge.status).toBe(413)
  })
})

describe('the consent page', () => {
  test('lists the client and the scopes with labelled checkboxes; its form may lead to the client (form-action)', async () => {
    const { browser, fields } = await atLogin()
    const signedIn = await signIn(browser, fields)
    const consent = await browser.get(signedIn.headers.get('location') ?? '')
    expect(consent.status).toBe(200)
    expectPageHeaders(consent)
    expect(consent.headers.get('content-security-policy')).toMatch(
      /form-action 'self' http:\/\/127\.0\.0\.1:5173;/,
    )
    const html = await consent.text()
    expect(html).toContain('Demo single-page app')
    expect(html).toContain('Signed in as <strong>ada</strong>')
    expect(html).toContain(
      '<input type="checkbox" id="scope-read:orders" name="scope" value="read:orders" checked>',
    )
    expect(html).toContain('<label for="scope-read:orders">')
    expect(html).toContain(
      '<input type="checkbox" id="scope-profile" name="scope" value="profile" checked>',
    )
    expect(html).toContain('name="decision" value="approve"')
    expect(html).toContain('name="decision" value="deny"')
  })

  test('without a signed-in session the consent page sends the browser to sign in', async () => {
    const { browser, fields } = await atLogin()
    const consent = await browser.get(
      `${base}/consent?interaction=${encodeURIComponent(fields.interaction)}`,
    )
    expect(consent.status).toBe(303)
    expect(consent.headers.get('location')).toMatch(/\/login\?interaction=/)
    const posted = await browser.post(`${base}/consent`, [
      ['interaction', fields.interaction],
      ['csrf', fields.csrf],
      ['decision', 'approve'],
    ])
    expect(posted.status).toBe(303)
    expect(posted.headers.get('location')).toMatch(/\/login\?interaction=/)
  })

  test('an interaction completes once: the same consent posted again is a 400 page, not a second code', async () => {
    const browser = new Browser()
    const { callback, consentPage } = await throughPages(authorizeUrl(), { browser })
    expect(callback.searchParams.get('code')).toBeTruthy()
    const again = await browser.post(`${base}/consent`, [
      ['interaction', hiddenField(consentPage, 'interaction')],
      ['csrf', hiddenField(consentPage, 'csrf')],
      ['decision', 'approve'],
    ])
    expect(again.status).toBe(400)
    expect(again.headers.get('location')).toBeNull()
  })

  test('a signed-in browser skips the login page for the next authorisation', async () => {
    const browser = new Browser()
    await throughPages(authorizeUrl(), { browser })
    const authorized = await browser.get(authorizeUrl('read:orders'))
    const login = await browser.get(authorized.headers.get('location') ?? '')
    expect(login.status).toBe(303)
    expect(login.headers.get('location')).toMatch(/\/consent\?interaction=/)
  })
})

describe('prompt=login and max_age (OpenID Connect Core §3.1.2.1), in process with a clock', () => {
  const PUBLIC = 'https://api.example'
  const setup = () => {
    let now = Date.UTC(2026, 10, 22, 10, 0, 0)
    const service = createService({
      publicUrl: PUBLIC,
      clock: () => now,
      rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
      clientAddress: () => '192.0.2.1',
    })
    const browser = new Browser(service)
    const flow = (parameters: Record<string, string> = {}) =>
      codeFlowTokens(browser, service, PUBLIC, DEMO_SPA, {
        scope: 'openid read:orders',
        nonce: 'nonce-1',
        ...parameters,
      })
    // /authorize in the signed-in browser: where its login page sends it.
    const loginStep = async (parameters: Record<string, string>) => {
      const authorized = await browser.get(
        `${PUBLIC}/authorize?${new URLSearchParams({
          client_id: DEMO_SPA.id,
          redirect_uri: DEMO_SPA.redirectUri,
          response_type: 'code',
          scope: 'openid read:orders',
          nonce: 'nonce-2',
          state: 'state-2',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          ...parameters,
        })}`,
      )
      expect(authorized.status).toBe(303)
      return browser.get(authorized.headers.get('location') ?? '')
    }
    return {
      service,
      browser,
      flow,
      loginStep,
      advance: (ms: number) => (now += ms),
      at: () => now,
    }
  }

  test('MUST sign in again with prompt=login even with a session; auth_time is the new sign-in', async () => {
    const { flow, loginStep, advance, at } = setup()
    const first = await flow()
    const firstSignIn = Math.floor(at() / 1000)
    expect(jwtClaims(first.id_token ?? '')['auth_time']).toBe(firstSignIn)
    advance(120_000)
    // Without prompt the session is reused: straight to the consent page.
    const reused = await loginStep({})
    expect(reused.status).toBe(303)
    expect(reused.headers.get('location')).toMatch(/\/consent\?interaction=/)
    // prompt=login: the login form, though the browser is signed in.
    const forced = await loginStep({ prompt: 'login' })
    expect(forced.status).toBe(200)
    expect(await forced.text()).toContain('<form method="post" action="login">')
    const second = await flow({ prompt: 'login' })
    expect(jwtClaims(second.id_token ?? '')['auth_time']).toBe(firstSignIn + 120)
  })

  test('MUST re-authenticate a sign-in older than max_age; a recent enough one is reused with its real auth_time', async () => {
    const { flow, loginStep, browser, service, advance, at } = setup()
    await flow()
    const signedInAt = Math.floor(at() / 1000)
    advance(10 * 60_000)
    const stale = await loginStep({ max_age: '300' })
    expect(stale.status).toBe(200)
    expect(await stale.text()).toContain('<form method="post" action="login">')
    // max_age=3600: the 10-minute-old sign-in will do; the ID token says when it happened.
    const fresh = await loginStep({ max_age: '3600' })
    expect(fresh.status).toBe(303)
    const consent = await browser.get(fresh.headers.get('location') ?? '')
    const page = await consent.text()
    const decided = await browser.post(`${PUBLIC}/consent`, [
      ['interaction', hiddenField(page, 'interaction')],
      ['csrf', hiddenField(page, 'csrf')],
      ['scope', 'openid'],
      ['scope', 'read:orders'],
      ['decision', 'approve'],
    ])
    expect(decided.status).toBe(303)
    const code = new URL(decided.headers.get('location') ?? '').searchParams.get('code') ?? ''
    const token = await service(
      new Request(`${PUBLIC}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: DEMO_SPA.redirectUri,
          client_id: DEMO_SPA.id,
          code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', // RFC 7636 Appendix B
        }).toString(),
      }),
    )
    const body = (await token.json()) as { id_token?: string }
    expect(token.status, JSON.stringify(body)).toBe(200)
    expect(jwtClaims(body.id_token ?? '')['auth_time']).toBe(signedInAt)
  })
})

test('MUST: approving no scope at all is a refusal: access_denied to the client', async () => {
  const { callback } = await throughPages(authorizeUrl('read:orders write:orders'), {
    untick: ['read:orders', 'write:orders'],
  })
  expect(callback.searchParams.get('error')).toBe('access_denied')
  expect(callback.searchParams.get('code')).toBeNull()
  expect(callback.searchParams.get('state')).toBe('state-1')
})

test('MUST: on an https public URL the cookie is Secure with the __Host- prefix', async () => {
  const service = createService({ publicUrl: 'https://api.example' })
  const authorized = await service(
    new Request(authorizeUrl().replace(base, 'https://api.example'), {
      headers: { accept: 'text/html' },
    }),
  )
  const login = authorized.headers.get('location') ?? ''
  expect(login.startsWith('https://api.example/login?interaction=')).toBe(true)
  // The interaction's cookie is Secure too (the issuer is https), and the page needs it.
  const binding = authorized.headers.getSetCookie()[0] ?? ''
  expect(binding).toMatch(
    /^oauth_interaction_[A-Za-z0-9_-]+=[^;]+; .*; HttpOnly; SameSite=Lax; Secure$/,
  )
  const page = await service(
    new Request(login, { headers: { accept: 'text/html', cookie: binding.split(';')[0] ?? '' } }),
  )
  expect(page.status).toBe(200)
  expect(page.headers.get('set-cookie')).toMatch(
    /^__Host-session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax; Secure$/,
  )
})

test('no form sent to the pages makes them answer 500', async () => {
  const service = createService({
    rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
    clientAddress: () => '192.0.2.1',
  })
  const field = fc.constantFrom(
    'interaction',
    'csrf',
    'username',
    'password',
    'decision',
    'scope',
    'x',
  )
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('/login', '/consent'),
      fc.oneof(
        fc
          .array(fc.tuple(field, fc.string({ maxLength: 100 })), { maxLength: 8 })
          .map((pairs) => new URLSearchParams(pairs).toString()),
        fc.string({ maxLength: 300 }),
        fc.uint8Array({ maxLength: 300 }),
      ),
      fc.constantFrom(
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded; charset=utf-8',
        'text/plain',
        'multipart/form-data',
      ),
      fc.option(fc.string({ maxLength: 80 }), { nil: undefined }),
      fc.option(
        fc.string({ maxLength: 80 }).filter((v) => !/[\r\n\0]/.test(v)),
        { nil: undefined },
      ),
      async (path, body, type, query, cookie) => {
        const url = `http://service.test${path}${query === undefined ? '' : `?interaction=${encodeURIComponent(query)}`}`
        for (const method of ['GET', 'POST']) {
          const response = await service(
            new Request(url, {
              method,
              headers: { 'content-type': type, ...(cookie ? { cookie } : {}) },
              body: method === 'POST' ? body : null,
            }),
          )
          expect(response.status).toBeLessThan(500)
          await response.arrayBuffer()
        }
      },
    ),
    { interruptAfterTimeLimit: 4000, numRuns: 300 },
  )
})

describe('login sessions per address, in process', () => {
  test('one address opening login pages without cookies keeps at most 20 sessions; an unknown address is not capped', async () => {
    const PUBLIC = 'https://api.example'
    const open = async (service: ReturnType<typeof createService>) => {
      const browser = new Browser(service)
      const authorized = await browser.get(
        `${PUBLIC}/authorize?${new URLSearchParams({
          client_id: DEMO_SPA.id,
          redirect_uri: DEMO_SPA.redirectUri,
          response_type: 'code',
          scope: 'openid',
          state: 'state-1',
          nonce: 'nonce-1',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        })}`,
      )
      const login = authorized.headers.get('location') ?? ''
      expect((await browser.get(login)).status).toBe(200)
      return { browser, login }
    }
    const rateLimits = [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }]
    for (const [clientAddress, kept] of [
      [() => '198.51.100.7', 20],
      [() => undefined, 21],
    ] as const) {
      const service = createService({ publicUrl: PUBLIC, rateLimits, clientAddress })
      const browsers = []
      for (let i = 0; i < 21; i++) browsers.push(await open(service))
      // The first browser's session is gone when the address is capped: its login page
      // starts a new one (a new Set-Cookie); otherwise it is still there.
      const { browser, login } = browsers[0] as { browser: Browser; login: string }
      const again = await browser.get(login)
      expect(again.headers.get('set-cookie') !== null, String(kept)).toBe(kept === 20)
    }
  })
})
