// The service as its own authorisation server (issuer = its public URL) and as the resource
// server of /v1: the AS of @api-blocks/oauth with the demo (or configured) users and clients,
// and bearer tokens on every /v1 route, checked in process.

import type { BearerOptions } from '@api-blocks/bearer'
import {
  BearerError,
  bearer,
  createTokenVerifier,
  parseBearerAuthorization,
  requireScopes,
} from '@api-blocks/bearer'
import type { Principal } from '@api-blocks/core'
import { storeGuard } from '@api-blocks/core'
import type { Handler, Middleware } from '@api-blocks/http'
import type { AuthorizationServer, OAuthEvent, OAuthStore, SigningKey } from '@api-blocks/oauth'
import { createAuthorizationServer, MemoryOAuthStore } from '@api-blocks/oauth'
import type { ServiceClient, ServiceUser } from './accounts.ts'
import {
  API_SCOPES,
  DEMO_CLIENTS,
  DEMO_USERS,
  demoClients,
  OIDC_SCOPES,
  UserDirectory,
} from './accounts.ts'
import { authPages } from './pages.ts'
import type { Deriver } from './passwords.ts'
import { PasswordChecker } from './passwords.ts'
import { SessionStore } from './session.ts'
import type { LoginThrottleOptions } from './throttle.ts'
import { LoginThrottle } from './throttle.ts'

/** How the service's authorisation server is set up; every member has a default. */
export interface OAuthOptions {
  /** Who may sign in (default: the demo user ada / lovelace). */
  users?: readonly ServiceUser[]
  /** Who may ask for tokens (default: demo-backend and demo-spa). */
  clients?: readonly ServiceClient[]
  /** Where codes, grants and tokens live (default: in memory, one process). */
  store?: OAuthStore
  /**
   * The HMAC key of code and token hashes, >= 32 bytes; the same on every instance that shares
   * the store (default: random per process).
   */
  tokenKey?: Uint8Array
  /** Keys that sign ID tokens and JWT access tokens, the first signs (default: one per process). */
  signingKeys?: readonly SigningKey[]
  /**
   * `opaque` (default): the API asks the authorisation server about each token, in process, so
   * a revocation takes effect at once. `jwt` (RFC 9068): the API verifies the signature with the
   * server's public keys; a revoked access token then works until it expires.
   */
  accessTokenFormat?: 'opaque' | 'jwt'
  /** Lifetimes in seconds (the authorisation server's defaults: access 900, refresh 14 days). */
  ttl?: { code?: number; accessToken?: number; refreshToken?: number; idToken?: number }
  /** Receives what the authorisation server reports (reused refresh tokens, replayed codes…). */
  onEvent?: (event: OAuthEvent) => void
  /**
   * How long the API waits for the OAuth store to say whether a token is active, in ms
   * (default 1000); past it, 503.
   */
  introspectionTimeoutMs?: number
  /** Browser sessions of the login pages kept at most (default 10,000). */
  maxSessions?: number
  /**
   * Password checks of POST /login: at most `maxConcurrent` scrypt derivations at once (default
   * 2) and `maxQueued` waiting (default 8; one more is a 503). `derive` replaces Node's scrypt
   * (tests count concurrent derivations with it).
   */
  passwordChecks?: { maxConcurrent?: number; maxQueued?: number; derive?: Deriver }
  /** Failed sign-ins per user name before and between locks (src/auth/throttle.ts). */
  loginThrottle?: Omit<LoginThrottleOptions, 'clock'>
}

/** The path of the API every token is for (the audience). */
const API_PATH = '/v1'

/** The GraphQL endpoint: the same API (and tokens) as /v1, its scopes checked per field. */
const GRAPHQL_PATH = '/graphql'

/** The resource identifier (RFC 8707; the `aud` of access tokens): the public URL + /v1. */
function resourceOf(publicUrl: string): string {
  return `${publicUrl}${API_PATH}`
}

/** What {@link createOAuth} builds. */
export interface ServiceOAuth {
  server: AuthorizationServer
  /** The AS endpoints and the login and consent pages: a Response, or undefined for other paths. */
  front: (request: Request) => Promise<Response | undefined>
  /**
   * Bearer tokens on /v1: reads need read:orders, writes write:orders, webhook endpoints
   * manage:webhooks (registering one read:orders too). On /graphql a valid token only: its
   * fields check their scopes themselves (@requiresScopes).
   */
  protect: Middleware
  /**
   * The principal of an `Authorization` value (`Bearer <token>`), or `undefined` when it is
   * missing, malformed or names no valid token: what a GraphQL WebSocket's `connection_init`
   * is checked with, by the verifier of {@link protect}'s.
   */
  authenticate: (authorization: string | null | undefined) => Promise<Principal | undefined>
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The webhook endpoints resource: every method needs manage:webhooks (a registration read:orders too). */
const WEBHOOKS_PATH = `${API_PATH}/webhook_endpoints`

/**
 * The paths of the authorisation server (its default ones) and of the login and
 * consent pages: answered outside the API's negotiation and bearer layers.
 */
const OAUTH_PATHS: ReadonlySet<string> = new Set([
  '/authorize',
  '/token',
  '/oauth/introspect',
  '/oauth/revoke',
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/.well-known/jwks.json',
  '/login',
  '/consent',
])

/** Whether a request path belongs to the authorisation server or its pages. */
export function isOAuthPath(path: string): boolean {
  return OAUTH_PATHS.has(path)
}

/** Builds the authorisation server, its pages and the bearer layer of the API. */
export function createOAuth(
  publicUrl: string,
  options: OAuthOptions,
  context: { clock?: () => number; problemBase?: string },
): ServiceOAuth {
  const clock = context.clock ?? Date.now
  const users = new UserDirectory(options.users ?? DEMO_USERS)
  const resource = resourceOf(publicUrl)
  const clients = demoClients(options.clients ?? DEMO_CLIENTS, resource)
  const format = options.accessTokenFormat ?? 'opaque'
  const scopes = new Set([
    ...Object.keys(OIDC_SCOPES),
    ...Object.keys(API_SCOPES),
    ...clients.flatMap((client) => client.scopes),
  ])
  const server = createAuthorizationServer({
    issuer: publicUrl,
    clients,
    interactionUrl: (id) => `${publicUrl}/login?interaction=${encodeURIComponent(id)}`,
    findAccount: async (subject) => users.account(subject),
    resources: [{ identifier: resource, accessTokenFormat: format }],
    scopesSupported: [...scopes],
    store: options.store ?? new MemoryOAuthStore(),
    ...(options.tokenKey ? { tokenKey: options.tokenKey } : {}),
    ...(options.signingKeys ? { signingKeys: options.signingKeys } : {}),
    ...(options.ttl ? { ttl: options.ttl } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(context.clock ? { clock: context.clock } : {}),
    // refreshReuseGraceMs stays 0 (the default): a rotated refresh token presented again, even
    // at once, revokes its family (RFC 9700 §4.14.2); docs/service.md, "Getting a token".
  })

  const pages = authPages({
    server,
    users,
    sessions: new SessionStore({
      secure: publicUrl.startsWith('https:'),
      clock,
      ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
    }),
    passwords: new PasswordChecker({
      storedHashes: [...(options.users ?? DEMO_USERS)].map((user) => user.passwordHash),
      ...options.passwordChecks,
    }),
    throttle: new LoginThrottle({ ...options.loginThrottle, clock }),
    publicUrl,
    clock,
  })
  const front = async (request: Request): Promise<Response | undefined> => {
    const path = new URL(request.url).pathname
    const page: Handler | undefined = Object.hasOwn(pages, path) ? pages[path] : undefined
    if (page) return page(request)
    return server.handle(request)
  }

  // Opaque tokens: introspected in process (revocation at once). JWTs (three dot-separated
  // parts): verified with the server's JWKS, fetched from the server in process too.
  // A store that hangs or is down (docs/operations.md, "When a store fails") fails the check
  // closed, within a deadline: 503 with Retry-After, never a token let through unchecked. No
  // breaker: the first request after the store is back is served, as the order routes are.
  const guard = storeGuard({
    timeoutMs: options.introspectionTimeoutMs ?? 1_000,
    breaker: false,
  })
  const verifierOptions: BearerOptions = {
    realm: publicUrl,
    introspection: {
      introspect: (token: string) => guard.run(() => server.introspectToken(token)),
      issuer: publicUrl,
      audience: resource,
    },
    ...(format === 'jwt'
      ? {
          jwt: {
            issuer: publicUrl,
            audience: resource,
            jwksUrl: `${publicUrl}/.well-known/jwks.json`,
            algorithms: ['ES256', 'RS256'],
            // The JWKS from the server itself, in process: no request over the network.
            fetch: (url: string) => server.jwks(new Request(url)),
          },
        }
      : {}),
    ...(context.clock ? { clock: context.clock } : {}),
    ...(context.problemBase ? { problemBase: context.problemBase } : {}),
  }
  const verify = bearer(verifierOptions)
  const verifier = createTokenVerifier(verifierOptions)
  const authenticate = async (authorization: string | null | undefined) => {
    const found = parseBearerAuthorization(authorization ?? null)
    if (found.type !== 'token') return undefined
    try {
      return await verifier.verify(found.token)
    } catch (error) {
      // A token refused is no principal; a store that is down is an error of its own.
      if (
        error instanceof BearerError &&
        error.code !== 'INTROSPECTION_UNAVAILABLE' &&
        error.code !== 'JWKS_UNAVAILABLE'
      ) {
        return undefined
      }
      throw error
    }
  }
  const read = requireScopes('read:orders')
  const write = requireScopes('write:orders')
  // Registering receivers, reading their secrets once and their delivery logs: one scope for
  // all of it, reads included (a delivery log shows what the receiver answered).
  const manage = requireScopes('manage:webhooks')
  // Registering an endpoint also needs read:orders: an endpoint receives the events of every
  // order (their full representation), so manage:webhooks alone would read what GET
  // /v1/orders refuses it. The 403 names both (RFC 6750 §3.1, `scope`).
  const register = requireScopes('manage:webhooks', 'read:orders')
  const webhooksScope = (method: string, path: string): Middleware =>
    path === WEBHOOKS_PATH && method === 'POST' ? register : manage
  const protect: Middleware = (request, next) => {
    const path = new URL(request.url).pathname
    if (path === GRAPHQL_PATH) return verify(request, next)
    if (path !== API_PATH && !path.startsWith(`${API_PATH}/`)) return next(request)
    const webhooks = path === WEBHOOKS_PATH || path.startsWith(`${WEBHOOKS_PATH}/`)
    return verify(request, (verified) =>
      (webhooks ? webhooksScope(verified.method, path) : READS.has(verified.method) ? read : write)(
        verified,
        next,
      ),
    )
  }
  return { server, front, protect, authenticate }
}
