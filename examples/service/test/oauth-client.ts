// Test helpers that act as OAuth clients of the service: a token by client credentials (in
// process or over HTTP), a fetch that carries one, and a browser (a cookie jar, redirects
// followed by hand) that goes through the real login and consent pages.
import { expect } from 'vitest'

/** The confidential demo client (client credentials and the code flow). */
export const DEMO_BACKEND = { id: 'demo-backend', secret: 'demo-backend-secret' } as const
/** The public demo client and its one redirect URI. */
export const DEMO_SPA = { id: 'demo-spa', redirectUri: 'http://127.0.0.1:5173/callback' } as const

/** RFC 6749 §2.3.1: each part form-urlencoded, then `id:secret` in base64. */
export function basic(id: string, secret: string): string {
  const encode = (text: string) => encodeURIComponent(text).replaceAll('%20', '+')
  return `Basic ${btoa(`${encode(id)}:${encode(secret)}`)}`
}

type Send = (request: Request) => Promise<Response>

/**
 * An access token for `client` by client credentials, from the service at `base` (in process
 * when `send` is the service's handler, over HTTP when it is fetch).
 */
export async function clientCredentialsToken(
  send: Send,
  base: string,
  scope = 'read:orders write:orders',
  client: { id: string; secret: string } = DEMO_BACKEND,
): Promise<string> {
  const response = await send(
    new Request(`${base}/token`, {
      method: 'POST',
      headers: {
        authorization: basic(client.id, client.secret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
    }),
  )
  const body = (await response.json()) as { access_token?: string }
  expect(response.status, JSON.stringify(body)).toBe(200)
  return body.access_token as string
}

const tokens = new Map<string, Promise<string>>()

/**
 * `fetch` with a demo-backend token (read:orders write:orders) of the service the URL names,
 * got once per origin. Headers of `init` win (a test may send its own Authorization).
 */
export async function apiFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const { origin } = new URL(url)
  const tokenOf = (fresh: boolean) => {
    let token = tokens.get(origin)
    if (token === undefined || fresh) {
      token = clientCredentialsToken((request) => fetch(request), origin)
      tokens.set(origin, token)
    }
    return token
  }
  const send = async (fresh: boolean) => {
    const headers = new Headers(init.headers)
    if (!headers.has('authorization'))
      headers.set('authorization', `Bearer ${await tokenOf(fresh)}`)
    return fetch(url, { ...init, headers })
  }
  const response = await send(false)
  // A token cached for a server that has since stopped (its port now another's): get a new one.
  if (response.status !== 401 || new Headers(init.headers).has('authorization')) return response
  await response.body?.cancel()
  return send(true)
}

/** Cookies as a browser keeps them for one site (names and values; attributes checked apart). */
export class CookieJar {
  readonly cookies = new Map<string, string>()
  readonly setCookies: string[] = []

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      this.setCookies.push(line)
      const [pair = ''] = line.split(';')
      const equals = pair.indexOf('=')
      this.cookies.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim())
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }
}

/**
 * The `Origin` a browser sends on a POST to `target` from a page of `pageOrigin` that was served
 * with `referrerPolicy` (Fetch §3.2 "serializing a request origin"): `null` when the policy hides
 * the page's origin, the origin otherwise. The default policy is strict-origin-when-cross-origin.
 */
export function browserOrigin(
  pageOrigin: string,
  referrerPolicy: string | null,
  target: string,
): string {
  const targetUrl = new URL(target)
  const downgrade = pageOrigin.startsWith('https:') && targetUrl.protocol !== 'https:'
  // A Referrer-Policy header may list several tokens; the last one the browser knows wins.
  const policy = referrerPolicy?.split(',').at(-1)?.trim().toLowerCase() || ''
  switch (policy) {
    case 'no-referrer':
      return 'null'
    case 'same-origin':
      return pageOrigin === targetUrl.origin ? pageOrigin : 'null'
    case 'unsafe-url':
    case 'origin':
    case 'origin-when-cross-origin':
      return pageOrigin
    default:
      // no-referrer-when-downgrade, strict-origin, strict-origin-when-cross-origin (default).
      return downgrade ? 'null' : pageOrigin
  }
}

/**
 * A browser: sends the jar's cookies, keeps new ones (those of /authorize's 303 too), never
 * follows redirects by itself. Over HTTP by default; `send` may be the service's handler, in
 * process (a test with an injected clock). Its form POSTs carry the headers a browser computes
 * itself: `Origin` as the page's Referrer-Policy allows it ({@link browserOrigin}) and
 * `Sec-Fetch-Site`.
 */
export class Browser {
  readonly jar = new CookieJar()
  readonly #send: Send
  /** The Referrer-Policy of the last page loaded (the page whose form is posted). */
  #referrerPolicy: string | null = null

  constructor(send: Send = (request) => fetch(request)) {
    this.#send = send
  }

  async get(url: string): Promise<Response> {
    const response = await this.#fetch(url, {
      redirect: 'manual',
      headers: { cookie: this.jar.header(), accept: 'text/html' },
    })
    this.jar.store(response)
    if (response.status === 200) this.#referrerPolicy = response.headers.get('referrer-policy')
    return response
  }

  /** A form POST as a browser sends it from the last page loaded, a page of `pageOrigin`. */
  async post(
    url: string,
    fields: [string, string][],
    pageOrigin = new URL(url).origin,
  ): Promise<Response> {
    const response = await this.#fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: this.jar.header(),
        'content-type': 'application/x-www-form-urlencoded',
        origin: browserOrigin(pageOrigin, this.#referrerPolicy, url),
        'sec-fetch-site': pageOrigin === new URL(url).origin ? 'same-origin' : 'cross-site',
        accept: 'text/html',
      },
      body: new URLSearchParams(fields).toString(),
    })
    this.jar.store(response)
    if (response.status === 200) this.#referrerPolicy = response.headers.get('referrer-policy')
    return response
  }

  #fetch(url: string, init: RequestInit): Promise<Response> {
    return this.#send(new Request(url, init))
  }
}

/** The value of the hidden input `name` of a page's form. */
export function hiddenField(page: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page)
  expect(match, `hidden field ${name}`).not.toBeNull()
  return match?.[1] ?? ''
}

/** The scopes the consent page offers as checkboxes. */
export function offeredScopes(page: string): string[] {
  return [...page.matchAll(/<input type="checkbox" id="[^"]*" name="scope" value="([^"]*)"/g)].map(
    (match) => match[1] ?? '',
  )
}

/** Where the flow stopped: the redirect to the client, and the pages on the way. */
export interface PagesResult {
  /** The Location of the consent's 303: the client's redirect URI with code (or error), state, iss. */
  callback: URL
  loginPage: Response
  consentPage: string
}

/**
 * The user's part of the code flow, through the real pages: GET the authorization URL, follow
 * to /login, sign in, follow to /consent, approve (all the scopes offered but `untick`) or deny.
 */
export async function throughPages(
  authorizationUrl: URL | string,
  options: {
    browser?: Browser
    username?: string
    password?: string
    decision?: 'approve' | 'deny'
    untick?: readonly string[]
  } = {},
): Promise<PagesResult> {
  const browser = options.browser ?? new Browser()
  const authorized = await browser.get(String(authorizationUrl))
  expect(authorized.status, await authorized.clone().text()).toBe(303)
  const loginUrl = authorized.headers.get('location') ?? ''
  expect(loginUrl).toMatch(/\/login\?interaction=/)
  const loginPage = await browser.get(loginUrl)
  expect(loginPage.status).toBe(200)
  const loginHtml = await loginPage.clone().text()
  const signedIn = await browser.post(new URL('login', loginUrl).href, [
    ['interaction', hiddenField(loginHtml, 'interaction')],
    ['csrf', hiddenField(loginHtml, 'csrf')],
    ['username', options.username ?? 'ada'],
    ['password', options.password ?? 'lovelace'],
  ])
  expect(signedIn.status, await signedIn.clone().text()).toBe(303)
  const consentUrl = signedIn.headers.get('location') ?? ''
  const consent = await browser.get(consentUrl)
  expect(consent.status).toBe(200)
  const consentPage = await consent.text()
  const ticked = offeredScopes(consentPage).filter((scope) => !options.untick?.includes(scope))
  const decided = await browser.post(new URL('consent', consentUrl).href, [
    ['interaction', hiddenField(consentPage, 'interaction')],
    ['csrf', hiddenField(consentPage, 'csrf')],
    ...(consentPage.includes('name="scope" value="openid"')
      ? [['scope', 'openid'] as [string, string]]
      : []),
    ...ticked.map((scope): [string, string] => ['scope', scope]),
    ['decision', options.decision ?? 'approve'],
  ])
  expect(decided.status, await decided.clone().text()).toBe(303)
  return { callback: new URL(decided.headers.get('location') ?? ''), loginPage, consentPage }
}

/** The token response of a code flow. */
export interface TokenResponse {
  access_token: string
  token_type: string
  expires_in: number
  scope: string
  refresh_token?: string
  id_token?: string
}

/**
 * The whole code flow with PKCE for a user, through the real pages, in the browser given (its
 * session reused when it has one): /authorize at `publicUrl` with `parameters` added, the
 * pages, then the code at /token (`client.secret`: client_secret_basic; none: public).
 */
export async function codeFlowTokens(
  browser: Browser,
  send: Send,
  publicUrl: string,
  client: { id: string; secret?: string; redirectUri: string },
  parameters: Record<string, string>,
  pages: Parameters<typeof throughPages>[1] = {},
): Promise<TokenResponse> {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const challenge = Buffer.from(
    await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)),
  ).toString('base64url')
  const url = `${publicUrl}/authorize?${new URLSearchParams({
    client_id: client.id,
    redirect_uri: client.redirectUri,
    response_type: 'code',
    state: 'state-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...parameters,
  })}`
  const { callback } = await throughPages(url, { ...pages, browser })
  const code = callback.searchParams.get('code')
  expect(code, callback.href).not.toBeNull()
  const response = await send(
    new Request(`${publicUrl}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(client.secret ? { authorization: basic(client.id, client.secret) } : {}),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code ?? '',
        redirect_uri: client.redirectUri,
        code_verifier: verifier,
        ...(client.secret ? {} : { client_id: client.id }),
      }).toString(),
    }),
  )
  const body = (await response.json()) as TokenResponse
  expect(response.status, JSON.stringify(body)).toBe(200)
  return body
}

/** The claims of a JWT (an ID token), unverified: for tests that check what was signed. */
export function jwtClaims(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'))
}
