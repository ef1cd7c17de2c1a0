/**
 * What the server conformance cases (and the package's own server tests) share: a server with
 * the demo clients over a given store, an injected clock, and the steps of the code flow as
 * plain requests.
 *
 * @module
 */
import { encodeBase64 } from '@api-blocks/core'
import { hashClientSecret } from '../clients.ts'
import type { OAuthEvent } from '../events.ts'
import type { AuthorizationServerOptions } from '../options.ts'
import type { AuthorizationServer } from '../server.ts'
import { createAuthorizationServer } from '../server.ts'
import type { OAuthStore } from '../store.ts'
import { RFC7636_APPENDIX_B } from './vectors/rfc7636.ts'

export const ISSUER = 'https://as.example.com'
export const SPA_REDIRECT = 'http://127.0.0.1:5173/callback'
export const BACKEND_SECRET = 'demo-backend-secret'
export const BACKEND_REDIRECT = 'https://backend.example.com/cb'
/** RFC 7636 Appendix B. */
export const VERIFIER: string = RFC7636_APPENDIX_B.verifier
/** RFC 7636 Appendix B. */
export const CHALLENGE: string = RFC7636_APPENDIX_B.challenge
/** Where the clock starts unless told otherwise. */
export const DEFAULT_NOW: number = Date.UTC(2026, 10, 25, 12, 0, 0)

/** A controllable clock. */
export class Clock {
  now: number
  constructor(now: number = DEFAULT_NOW) {
    this.now = now
  }
  readonly read = (): number => this.now
  advance(ms: number): void {
    this.now += ms
  }
}

/** A server, its store, its clock, and the events it emitted. */
export interface Harness {
  server: AuthorizationServer
  store: OAuthStore
  clock: Clock
  events: OAuthEvent[]
}

/** Makes a server with the demo clients (`demo-backend`, `demo-spa`) over `store`. */
export async function makeHarness(
  store: OAuthStore,
  overrides: Partial<AuthorizationServerOptions> = {},
  now: number = DEFAULT_NOW,
): Promise<Harness> {
  const clock = new Clock(now)
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

/** GET /authorize with `query`. */
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

/** An Authorization field of HTTP Basic client credentials (RFC 6749 §2.3.1: form-encoded first). */
export function basic(id: string, secret: string): string {
  const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+')
  return `Basic ${encodeBase64(new TextEncoder().encode(`${encode(id)}:${encode(secret)}`))}`
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

/** Refreshes with a refresh token of demo-spa. */
export function refresh(
  harness: Harness,
  token: string,
  extra: Record<string, string> = {},
): Promise<Response> {
  return harness.server.token(
    post('/token', {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: 'demo-spa',
      ...extra,
    }),
  )
}

/** The JSON body of `response`. */
export async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>
}
