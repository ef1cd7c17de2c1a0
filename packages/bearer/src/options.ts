/**
 * The configuration of a token verifier and of the `bearer()` middleware.
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'

/**
 * A public JSON Web Key (RFC 7517 §4) as plain data: what a JWKS document lists. Private
 * members (`d`, `p`, `q`, …) and symmetric keys (`kty: 'oct'`) are refused.
 *
 * @example
 * ```ts
 * const key: JsonWebKeyLike = { kty: 'EC', crv: 'P-256', x: '…', y: '…', kid: '2026-01', alg: 'ES256', use: 'sig' }
 * ```
 */
export interface JsonWebKeyLike {
  kty: string
  kid?: string
  alg?: string
  use?: string
  key_ops?: readonly string[]
  crv?: string
  x?: string
  y?: string
  n?: string
  e?: string
  [member: string]: unknown
}

/**
 * The fetch a verifier calls for a JWKS or an introspection request: the global `fetch`
 * fits, and so does any function with this shape (a test double, a fetch with a proxy agent).
 *
 * @example
 * ```ts
 * const logged: BearerFetch = (url, init) => { console.log(init.method, url); return fetch(url, init) }
 * ```
 */
export type BearerFetch = (
  url: string,
  init: {
    method: 'GET' | 'POST'
    headers: Headers
    body?: string
    signal: AbortSignal
    redirect: 'manual'
  },
) => Promise<Response>

/**
 * How JWT access tokens (RFC 9068) are verified. Keys come from `jwksUrl` (fetched, cached,
 * refreshed on an unknown `kid` at most once per `jwksCooldownMs`) or from the static `keys`;
 * exactly one of the two.
 *
 * @example
 * ```ts
 * const jwt: JwtVerificationOptions = {
 *   issuer: 'https://auth.example.com',
 *   audience: 'https://api.example.com',
 *   jwksUrl: 'https://auth.example.com/.well-known/jwks.json',
 * }
 * ```
 */
export interface JwtVerificationOptions {
  /** The `iss` every token must carry, byte for byte (RFC 9068 §4). */
  issuer: string
  /** This resource server's identifier(s); the token's `aud` must contain one (RFC 9068 §4). */
  audience: string | readonly string[]
  /** The authorisation server's JWKS URI (its metadata's `jwks_uri`). */
  jwksUrl?: string | URL
  /** Static public keys, instead of `jwksUrl`. */
  keys?: readonly JsonWebKeyLike[]
  /**
   * The signature algorithms accepted (default `['ES256']`). Asymmetric only: `none` and the
   * `HS*` family are refused here, so a token can never pick its own verification method.
   */
  algorithms?: readonly string[]
  /** The `typ` header required (default `at+jwt`, which also matches `application/at+jwt`). */
  typ?: string
  /** Leeway for `exp`, `nbf` and `iat`, in seconds (default 30). */
  clockToleranceSeconds?: number
  /** The least time between two JWKS fetches caused by an unknown `kid`, ms (default 30 000). */
  jwksCooldownMs?: number
  /** How long one JWKS fetch may take, ms (default 5000). */
  jwksTimeoutMs?: number
  /** How long fetched keys are used before they are fetched again, ms (default 600 000). */
  jwksCacheMaxAgeMs?: number
  /** The fetch used for the JWKS (default: the global `fetch`). */
  fetch?: BearerFetch
}

/**
 * What an introspection answers (RFC 7662 §2.2): `active`, and for an active token the members
 * the authorisation server knows.
 *
 * @example
 * ```ts
 * const answer: IntrospectionResponse = { active: true, scope: 'read:orders', client_id: 'app', sub: 'user-1', exp: 1_900_000_000 }
 * ```
 */
export interface IntrospectionResponse {
  active: boolean
  scope?: string
  client_id?: string
  sub?: string
  username?: string
  exp?: number
  iat?: number
  nbf?: number
  aud?: string | string[]
  iss?: string
  jti?: string
  token_type?: string
  cnf?: Record<string, string>
  [member: string]: unknown
}

/** What both kinds of introspection check besides `active`. */
interface IntrospectionChecks {
  /** When set, an active token's `aud` must contain one of these (RFC 9700 §2.3). */
  audience?: string | readonly string[]
  /** When set, an active token's `iss` must equal it. */
  issuer?: string
}

/**
 * Introspection by a function in the same process (an authorisation server's
 * `introspectToken`): nothing is cached, so a revocation takes effect at once.
 *
 * @example
 * ```ts
 * const introspection: InProcessIntrospectionOptions = { introspect: (token) => server.introspectToken(token) }
 * ```
 */
export interface InProcessIntrospectionOptions extends IntrospectionChecks {
  introspect: (token: string) => Promise<IntrospectionResponse>
}

/**
 * Introspection over HTTP (RFC 7662), authenticated with `client_secret_basic`, with a bounded
 * cache of active answers.
 *
 * @example
 * ```ts
 * const introspection: HttpIntrospectionOptions = {
 *   url: 'https://auth.example.com/oauth/introspect',
 *   clientId: 'orders-api',
 *   clientSecret: process.env.INTROSPECTION_SECRET ?? '',
 * }
 * ```
 */
export interface HttpIntrospectionOptions extends IntrospectionChecks {
  /** The introspection endpoint (the metadata's `introspection_endpoint`). */
  url: string | URL
  /** This resource server's client id at the authorisation server. */
  clientId: string
  /** Its client secret. */
  clientSecret: string
  /** How long one introspection request may take, ms (default 5000). */
  timeoutMs?: number
  /** The fetch used (default: the global `fetch`). */
  fetch?: BearerFetch
  /**
   * The cache of active answers, keyed by the token's SHA-256: at most `maxEntries` (default
   * 10 000, least recently used evicted), each kept `maxAgeSeconds` (default 60) and never past
   * the token's `exp`. A revocation therefore takes effect within `maxAgeSeconds`. Inactive
   * answers are not cached. `{ maxEntries: 0 }` turns the cache off.
   */
  cache?: { maxEntries?: number; maxAgeSeconds?: number }
}

/**
 * How tokens are verified and answered. At least one of `jwt` and `introspection`; with both,
 * a token of three dot-separated parts goes to `jwt`, any other to `introspection`.
 *
 * @example
 * ```ts
 * const options: BearerOptions = {
 *   realm: 'orders',
 *   jwt: { issuer: 'https://auth.example.com', audience: 'https://api.example.com', jwksUrl: 'https://auth.example.com/.well-known/jwks.json' },
 * }
 * ```
 */
export interface BearerOptions {
  /** The realm of the challenges (default `api`). */
  realm?: string
  jwt?: JwtVerificationOptions
  introspection?: InProcessIntrospectionOptions | HttpIntrospectionOptions
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number
  /** Base URI that problem-type slugs resolve against. */
  problemBase?: string
}

/**
 * Verifies an access token and answers who it speaks for.
 *
 * @example
 * ```ts
 * const verifier: TokenVerifier = createTokenVerifier({ jwt })
 * const principal = await verifier.verify(token) // throws BearerError
 * ```
 */
export interface TokenVerifier {
  /** The principal of a valid token; throws a `BearerError` otherwise. */
  verify(token: string): Promise<Principal>
}
