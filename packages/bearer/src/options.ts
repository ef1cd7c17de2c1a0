/**
 * The configuration of a token verifier and of the `bearer()` middleware.
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'

/**
 * How long past `jwksCacheMaxAgeMs` the keys of the last good JWKS are still used while every
 * refetch fails: one hour. After it, tokens are answered 503 `JWKS_UNAVAILABLE` until the
 * JWKS can be fetched again.
 *
 * @example
 * ```ts
 * console.log(`keys outlive an outage by ${JWKS_STALE_GRACE_MS / 60_000} minutes`)
 * ```
 */
export const JWKS_STALE_GRACE_MS: number = 3_600_000

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
  /** Required; optional in the type so that jose's `JWK` (and `exportJWK()`'s result) fits. */
  kty?: string
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
  /**
   * The `typ` header required: `at+jwt` (the default) or `application/at+jwt`, which jose
   * treats alike (RFC 9068 §4); any other value is refused at construction.
   */
  typ?: 'at+jwt' | 'application/at+jwt'
  /**
   * Allow an `http:` `jwksUrl` on a host other than a loopback one (`localhost`,
   * `127.0.0.0/8`, `[::1]`); default `false`, since the JWKS decides which tokens are genuine.
   */
  allowInsecureHttp?: boolean
  /** Leeway for `exp`, `nbf` and `iat`, in seconds (default 30). */
  clockToleranceSeconds?: number
  /**
   * The least time between two JWKS fetches, ms (default 30 000, at least 1000): the clock
   * starts at every fetch, whether it succeeded or not. Within it a token with an unknown `kid`
   * is refused from the keys at hand (401 `invalid_token`) without a fetch.
   */
  jwksCooldownMs?: number
  /** How long one JWKS fetch may take, ms (default 5000, at least 1). */
  jwksTimeoutMs?: number
  /**
   * How long fetched keys are used before they are fetched again, ms (default 600 000). When
   * the refetch fails, the keys at hand are still used for {@link JWKS_STALE_GRACE_MS} past
   * this age (an outage of the authorisation server does not stop this API at once), then the
   * verifier answers 503 `JWKS_UNAVAILABLE` until a fetch succeeds.
   */
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
  /**
   * Required: this resource server's identifier(s); an active token's `aud` (a string or a
   * list) must contain one of them (RFC 9700 §2.3: a token meant for another resource server
   * must not be accepted here). `false` accepts a token of any audience: **unsafe** (any API
   * of the same authorisation server could replay its tokens here); only for an authorisation
   * server that issues tokens for this one API and no `aud`.
   */
  audience: string | readonly string[] | false
  /** When set, an active token's `iss` must equal it. */
  issuer?: string
  /**
   * Whether an active answer must carry `token_type` `Bearer` (compared without regard to
   * case), default `true`. With `false`, an answer without `token_type` is accepted (for
   * authorisation servers that omit it); one with another `token_type` is still refused.
   * An answer whose `token_use` is present and not `access_token` is refused either way.
   */
  requireTokenType?: boolean
  /** Leeway for the answer's `exp` and `nbf`, in seconds (default 30, at most 300). */
  clockToleranceSeconds?: number
}

/**
 * Introspection by a function in the same process (an authorisation server's
 * `introspectToken`): nothing is cached, so a revocation takes effect at once.
 *
 * @example
 * ```ts
 * const introspection: InProcessIntrospectionOptions = {
 *   introspect: (token) => server.introspectToken(token),
 *   audience: 'https://api.example.com',
 * }
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
 *   audience: 'https://api.example.com',
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
  /** How long one introspection request may take, ms (default 5000, at least 1). */
  timeoutMs?: number
  /**
   * Allow an `http:` URL on a host other than a loopback one (`localhost`, `127.0.0.0/8`,
   * `[::1]`); default `false`, since the request carries this API's client secret.
   */
  allowInsecureHttp?: boolean
  /** The fetch used (default: the global `fetch`). */
  fetch?: BearerFetch
  /**
   * The cache of active answers, keyed by the token's SHA-256: at most `maxEntries` (default
   * 10 000, least recently used evicted), each kept `maxAgeSeconds` (default 60, at most 300) and never past
   * the token's `exp`. A revocation therefore takes effect within `maxAgeSeconds`. Inactive
   * answers are not cached. `{ maxEntries: 0 }` turns the cache off.
   */
  cache?: { maxEntries?: number; maxAgeSeconds?: number }
}

/**
 * How tokens are verified and answered. At least one of `jwt` and `introspection`; with both,
 * a token that is a JWS (three dot-separated parts, the first a base64url JSON object with a
 * string `alg`) goes to `jwt`, any other (such as `mF_9.B5f-4.1JqM`) to `introspection`.
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
