/**
 * What the tests of the server share: a store, a server with the demo clients, and the steps of
 * the code flow as plain requests.
 */

import { hashClientSecret } from '../src/clients.ts'
import type { OAuthEvent } from '../src/events.ts'
import { MemoryOAuthStore } from '../src/memory-store.ts'
import type { AuthorizationServerOptions } from '../src/options.ts'
import type { AuthorizationServer } from '../src/server.ts'
import { createAuthorizationServer } from '../src/server.ts'
import type { OAuthStore } from '../src/store.ts'

export function makeStore(): OAuthStore {
  return new MemoryOAuthStore()
}

export const ISSUER = 'https://as.example.com'
export const SPA_REDIRECT = 'http://127.0.0.1:5173/callback'
export const BACKEND_SECRET = 'demo-backend-secret'
export const BACKEND_REDIRECT = 'https://backend.example.com/cb'
// RFC 7636 Appendix B.
export const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
export const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

/** A controllable clock. */
export class Clock {
  now: number = Date.UTC(2026, 10, 25, 12, 0, 0)
  readonly read = (): number => this.now
  advance(ms: number): void {
    this.now += ms
  }
}

export interface Harness {
  server: AuthorizationServer
  store: OAuthStore
  clock: Clock
  events: OAuthEvent[]
}

export async function makeServer(
  overrides: Partial<AuthorizationServerOptions> = {},
): Promise<Harness> {
  const clock = new Clock()
  const store = overrides.store ?? makeStore()
  const events: OAuthEvent[] = []
  const server = createAuthorizationServer({
    issuer: ISSUER,
    clients: [
      {
        id: 'demo-backend',
        name: 'Demo backend',
        secretHashes: [await hashClientSecret(BACKEND_SECRET)],
        redirectUris: [BACKEND_REDIRECT],
        grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
        scopes: ['openid', 'offline_access', 'read:orders', 'write:orders', 'manage:webhooks'],
      },
      {
        id: 'demo-spa',
        name: 'Demo SPA',
        public: true,
        redirectUris: [SPA_REDIRECT],
        grantTypes: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders', 'write:orders'],
      },
    ],
    interactionUrl: (id) => `${ISSUER}/login?interaction=${id}`,
    findAccount: async (subject) =>
      subject === 'user-ada'
        ? {
            subject,
            username: 'ada',
            claims: { name: 'Ada Lovelace', email: 'ada@example.com', email_verified: true },
          }
        : undefined,
    clock: clock.read,
    onEvent: (event) => events.push(event),
    ...overrides,
    store,
  })
  return { server, store, clock, events }
}

/** The query of a valid authorization request of demo-spa, with `changes` applied (undefined deletes). */
export function authorizeQuery(changes: Record<string, string | undefined> = {}): URLSearchParams {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: 'demo-spa',
    redirect_uri: SPA_REDIRECT,
    scope: 'openid profile email offline_access read:orders',
    state: 'state-123',
    nonce: 'nonce-456',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  })
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) query.delete(name)
    else query.set(name, value)
  }
  return query
}

export function authorizeRequest(query: URLSearchParams | string): Request {
  return new Request(`${ISSUER}/authorize?${query.toString()}`)
}

/** An interaction started by a browser: its id, the cookie /authorize set, and the login page's request carrying it. */
export interface Started {
  readonly id: string
  /** The whole Set-Cookie field /authorize answered. */
  readonly setCookie: string
  /** `name=value`, what the browser sends back. */
  readonly cookie: string
  /** The browser's request for the host's login page: the interaction URL with the cookie. */
  readonly page: Request
}

/** GET /authorize as a browser would: follows nothing, keeps the cookie. */
export async function startInteraction(
  harness: Harness,
  changes: Record<string, string | undefined> = {},
): Promise<Started> {
  const response = await harness.server.authorize(authorizeRequest(authorizeQuery(changes)))
  if (response.status !== 303) throw new Error(`authorize answered ${response.status}`)
  const location = new URL(response.headers.get('location')!)
  const setCookie = response.headers.get('set-cookie')!
  const cookie = setCookie.split(';')[0]!
  return {
    id: location.searchParams.get('interaction')!,
    setCookie,
    cookie,
    page: new Request(location, { headers: { cookie } }),
  }
}

/** GET /authorize then completeInteraction: the code (and the full redirect). */
export async function obtainCode(
  harness: Harness,
  changes: Record<string, string | undefined> = {},
  approve?: string[],
): Promise<{ code: string; redirect: URL }> {
  const { id, page } = await startInteraction(harness, changes)
  const details = await harness.server.interaction(id, page)
  const done = await harness.server.completeInteraction(
    id,
    { subject: 'user-ada', scopes: approve ?? [...details!.scopes] },
    page,
  )
  const redirect = new URL(done.headers.get('location')!)
  return { code: redirect.searchParams.get('code')!, redirect }
}

export function basic(id: string, secret: string): string {
  const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+')
  return `Basic ${btoa(`${encode(id)}:${encode(secret)}`)}`
}

/** A POST form request to `path`. */
export function post(
  path: string,
  form: Record<string, string> | string,
  headers: Record<string, string> = {},
): Request {
  return new Request(`${ISSUER}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
  })
}

/** Exchanges a code of demo-spa. */
export async function exchange(
  harness: Harness,
  code: string,
  changes: Record<string, string | undefined> = {},
): Promise<Response> {
  const form: Record<string, string> = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: SPA_REDIRECT,
    code_verifier: VERIFIER,
    client_id: 'demo-spa',
  }
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete form[name]
    else form[name] = value
  }
  return harness.server.token(post('/token', form))
}

export async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>
}
