/**
 * What the tests of the server share: a store, a server with the demo clients, and the steps of
 * the code flow as plain requests.
 */

import { hashClientSecret } from '../src/clients.ts'
import type { OAuthEvent } from '../src/events.ts'
import type { AuthorizationServerOptions } from '../src/options.ts'
import type { AuthorizationServer } from '../src/server.ts'
import { createAuthorizationServer } from '../src/server.ts'
import type {
  ActiveToken,
  CodeRecord,
  ConsumeCodeResult,
  FamilyRecord,
  InteractionRecord,
  OAuthStore,
  RotateRefreshOptions,
  RotateRefreshResult,
  TokenRecord,
} from '../src/store.ts'

/** A minimal store for the protocol tests until the memory store lands. */
class TinyStore implements OAuthStore {
  interactions = new Map<string, InteractionRecord>()
  codes = new Map<string, { code: CodeRecord; consumed: boolean }>()
  families = new Map<string, FamilyRecord>()
  revoked = new Map<string, number>()
  tokens = new Map<string, { token: TokenRecord; rotatedAt?: number; revoked?: boolean }>()
  async saveInteraction(i: InteractionRecord) {
    this.interactions.set(i.id, i)
  }
  async findInteraction(id: string, now: number) {
    const i = this.interactions.get(id)
    return i !== undefined && i.expiresAt > now ? i : undefined
  }
  async takeInteraction(id: string, now: number) {
    const i = await this.findInteraction(id, now)
    this.interactions.delete(id)
    return i
  }
  async saveCode(code: CodeRecord) {
    this.codes.set(code.codeHash, { code, consumed: false })
  }
  async consumeCode(hash: string, now: number): Promise<ConsumeCodeResult> {
    const entry = this.codes.get(hash)
    if (entry === undefined || entry.code.expiresAt <= now) return { state: 'absent' }
    if (entry.consumed) return { state: 'replayed', code: entry.code }
    entry.consumed = true
    return { state: 'consumed', code: entry.code }
  }
  async issue(family: FamilyRecord, tokens: readonly TokenRecord[], now: number) {
    if ((this.revoked.get(family.id) ?? 0) > now) return 'revoked' as const
    if (!this.families.has(family.id)) this.families.set(family.id, family)
    for (const token of tokens) this.tokens.set(`${token.familyId}/${token.tokenHash}`, { token })
    return 'issued' as const
  }
  async findToken(familyId: string, hash: string, now: number): Promise<ActiveToken | undefined> {
    const entry = this.tokens.get(`${familyId}/${hash}`)
    const family = this.families.get(familyId)
    if (entry === undefined || family === undefined) return undefined
    if (entry.revoked || entry.rotatedAt !== undefined || entry.token.expiresAt <= now)
      return undefined
    if ((this.revoked.get(familyId) ?? 0) > now || family.expiresAt <= now) return undefined
    return { token: entry.token, family }
  }
  async rotateRefresh(
    familyId: string,
    hash: string,
    next: readonly TokenRecord[],
    now: number,
    options: RotateRefreshOptions,
  ): Promise<RotateRefreshResult> {
    const entry = this.tokens.get(`${familyId}/${hash}`)
    const family = this.families.get(familyId)
    if (entry === undefined || family === undefined || entry.token.kind !== 'refresh_token')
      return { state: 'absent' }
    if (entry.revoked || (this.revoked.get(familyId) ?? 0) > now) return { state: 'revoked' }
    if (entry.rotatedAt !== undefined) {
      if (now - entry.rotatedAt < options.graceMs) return { state: 'reused-in-grace' }
      await this.revokeFamily(familyId, now, family.expiresAt)
      return { state: 'reused', family }
    }
    if (entry.token.expiresAt <= now || family.expiresAt <= now) return { state: 'expired' }
    entry.rotatedAt = now
    for (const token of next) this.tokens.set(`${token.familyId}/${token.tokenHash}`, { token })
    return { state: 'rotated', family }
  }
  async revokeToken(familyId: string, hash: string) {
    const entry = this.tokens.get(`${familyId}/${hash}`)
    if (entry !== undefined) entry.revoked = true
  }
  async revokeFamily(familyId: string, _now: number, retainUntil: number) {
    this.revoked.set(familyId, Math.max(retainUntil, this.revoked.get(familyId) ?? 0))
  }
  async remember() {
    return true
  }
}

export function makeStore(): OAuthStore {
  return new TinyStore()
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

/** GET /authorize then completeInteraction: the code (and the full redirect). */
export async function obtainCode(
  harness: Harness,
  changes: Record<string, string | undefined> = {},
  approve?: string[],
): Promise<{ code: string; redirect: URL }> {
  const response = await harness.server.authorize(authorizeRequest(authorizeQuery(changes)))
  if (response.status !== 303) throw new Error(`authorize answered ${response.status}`)
  const id = new URL(response.headers.get('location')!).searchParams.get('interaction')!
  const details = await harness.server.interaction(id)
  const done = await harness.server.completeInteraction(id, {
    subject: 'user-ada',
    scopes: approve ?? [...details!.scopes],
  })
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
