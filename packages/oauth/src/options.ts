/**
 * The options of {@link createAuthorizationServer}, their defaults and their checks.
 *
 * @module
 */
import { createHmacKey, type HmacKey } from '@api-blocks/core/crypto'
import type { Account } from './account.ts'
import {
  type ClientConfig,
  type ClientRegistry,
  checkedRegistry,
  staticClients,
} from './clients.ts'
import type { OAuthEvent } from './events.ts'
import { checkSigningKeys, type SigningAlgorithm, type SigningKey } from './keys.ts'
import { isValidScope } from './scope.ts'
import type { OAuthStore } from './store.ts'
import { pooledRandom, type Random } from './tokens.ts'

/**
 * A resource server the tokens are for (RFC 8707): its identifier is the tokens' audience.
 *
 * @example
 * ```ts
 * const api: ResourceConfig = { identifier: 'https://api.example.com/', accessTokenFormat: 'jwt' }
 * ```
 */
export interface ResourceConfig {
  /** An absolute URI without a fragment: the `aud` of its tokens. */
  readonly identifier: string
  /**
   * `opaque` (the default): 256 random bits, checked by introspection, revoked at once. `jwt`:
   * an RFC 9068 JWT the resource server verifies itself, valid until it expires (revocation
   * still shows in introspection).
   */
  readonly accessTokenFormat?: 'opaque' | 'jwt' | undefined
  /** Seconds, 300 to 3600; default the server's `ttl.accessToken`. */
  readonly accessTokenTtlSeconds?: number | undefined
}

/**
 * Lifetimes, in seconds.
 *
 * @example
 * ```ts
 * const ttl: TtlOptions = { accessToken: 600, refreshToken: 7 * 86_400 }
 * ```
 */
export interface TtlOptions {
  /** Authorization code, default 60 (RFC 6749 §4.1.2 asks for at most 10 minutes). */
  readonly code?: number | undefined
  /** Access token, default 900, allowed 300 to 3600. */
  readonly accessToken?: number | undefined
  /**
   * Refresh token and the whole grant, default 14 days, allowed 1 to 90 days. Rotation never
   * extends a grant past its end: the user signs in again then.
   */
  readonly refreshToken?: number | undefined
  /** ID token, default 3600. */
  readonly idToken?: number | undefined
  /** A login and consent in progress, default 600. */
  readonly interaction?: number | undefined
}

/**
 * The paths of the endpoints, each appended to the issuer's URL.
 *
 * @example
 * ```ts
 * const paths: EndpointPaths = { token: '/oauth/token' }
 * ```
 */
export interface EndpointPaths {
  readonly authorize?: string | undefined
  readonly token?: string | undefined
  readonly introspect?: string | undefined
  readonly revoke?: string | undefined
  readonly jwks?: string | undefined
  readonly userinfo?: string | undefined
}

/**
 * Options of {@link createAuthorizationServer}.
 *
 * @example
 * ```ts
 * const options: AuthorizationServerOptions = {
 *   issuer: 'https://auth.example.com',
 *   clients: [{ id: 'backend', secretHashes: [hash], grantTypes: ['client_credentials'], scopes: ['read:orders'] }],
 *   interactionUrl: (id) => `/login?interaction=${id}`,
 * }
 * ```
 */
export interface AuthorizationServerOptions {
  /**
   * An absolute `https` URL (`http` for loopback), without query or fragment. It is `iss`
   * everywhere, byte for byte, and the endpoints are it plus their paths.
   */
  readonly issuer: string
  readonly clients: ClientRegistry | readonly ClientConfig[]
  /** Where `/authorize` sends the user agent (303) for the host's login and consent pages. */
  readonly interactionUrl: (interactionId: string) => string
  /** Default: a new `MemoryOAuthStore` (one process only). */
  readonly store?: OAuthStore | undefined
  /**
   * At least 32 bytes: the HMAC key of the hashes the store keeps. Default: random per
   * process, so a restart invalidates every token; give one to share tokens between instances.
   */
  readonly tokenKey?: Uint8Array | undefined
  /** The first signs, all are published. Default: one ES256 key generated at start. */
  readonly signingKeys?: readonly SigningKey[] | undefined
  /** The end user's claims for ID tokens and the `username` of introspection. */
  readonly findAccount?: ((subject: string) => Promise<Account | undefined>) | undefined
  /** The resources tokens may be for; the first is the default. Default: the issuer itself. */
  readonly resources?: readonly ResourceConfig[] | undefined
  readonly ttl?: TtlOptions | undefined
  /**
   * Milliseconds after its rotation during which a refresh token presented again is taken for
   * a race (two tabs) rather than theft: refused without revoking the grant. Default 0 (off);
   * at most 60 000.
   */
  readonly refreshReuseGraceMs?: number | undefined
  /** The scopes discovery advertises. Default: every scope of the configured clients, when a list. */
  readonly scopesSupported?: readonly string[] | undefined
  readonly paths?: EndpointPaths | undefined
  /** ms since the epoch; default `Date.now`. */
  readonly clock?: (() => number) | undefined
  /** Default `crypto.getRandomValues`. */
  readonly random?: Random | undefined
  /** Told what happened (never a token or a secret). Must not throw. */
  readonly onEvent?: ((event: OAuthEvent) => void) | undefined
  /** The most bytes of a form body, default 16 KiB. */
  readonly maxFormBytes?: number | undefined
}

/** `T` with every member present and defined. */
type Filled<T> = { readonly [K in keyof T]-?: Exclude<T[K], undefined> }

/**
 * The options with their defaults, checked.
 *
 * @example
 * ```ts
 * const resolved: ResolvedOptions = resolveOptions(options)
 * ```
 */
export interface ResolvedOptions {
  readonly issuer: string
  readonly clients: ClientRegistry
  readonly interactionUrl: (interactionId: string) => string
  readonly tokenKey: HmacKey
  readonly signingKeys: readonly SigningKey[] | undefined
  readonly signingAlgorithms: readonly SigningAlgorithm[]
  readonly findAccount: ((subject: string) => Promise<Account | undefined>) | undefined
  readonly resources: readonly Filled<ResourceConfig>[]
  readonly ttl: Filled<TtlOptions>
  readonly refreshReuseGraceMs: number
  readonly scopesSupported: readonly string[]
  readonly paths: Filled<EndpointPaths>
  readonly clock: () => number
  readonly random: Random
  readonly onEvent: (event: OAuthEvent) => void
  readonly maxFormBytes: number
}

function seconds(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  const result = value ?? fallback
  if (!Number.isInteger(result) || result < min || result > max) {
    throw new RangeError(`ttl.${name} is a whole number of seconds from ${min} to ${max}`)
  }
  return result
}

function checkIssuer(issuer: string): void {
  let url: URL
  try {
    url = new URL(issuer)
  } catch {
    throw new TypeError('issuer is an absolute URL')
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  // RFC 8414 §2: https, no query, no fragment.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new TypeError('issuer is an https URL (http only for localhost)')
  }
  if (url.search !== '' || url.hash !== '' || issuer.includes('?') || issuer.includes('#')) {
    throw new TypeError('issuer has no query or fragment')
  }
}

function checkPath(path: string): string {
  if (!/^\/[A-Za-z0-9._~/-]*$/.test(path))
    throw new TypeError(`The path ${path} is not a plain absolute path`)
  return path
}

const DAY = 86_400

/**
 * Resolves and checks the options; throws a TypeError or RangeError naming the bad one.
 *
 * @example
 * ```ts
 * const resolved = resolveOptions({ issuer, clients, interactionUrl })
 * resolved.ttl.accessToken // 900
 * ```
 */
export function resolveOptions(options: AuthorizationServerOptions): ResolvedOptions {
  checkIssuer(options.issuer)
  if (typeof options.interactionUrl !== 'function')
    throw new TypeError('interactionUrl is a function')
  const tokenKey = options.tokenKey ?? crypto.getRandomValues(new Uint8Array(32))
  if (!(tokenKey instanceof Uint8Array) || tokenKey.byteLength < 32) {
    throw new TypeError('tokenKey is a Uint8Array of at least 32 bytes')
  }
  if (options.signingKeys !== undefined) checkSigningKeys(options.signingKeys)
  const ttl = options.ttl ?? {}
  const accessToken = seconds('accessToken', ttl.accessToken, 900, 300, 3600)
  const resolvedTtl = {
    code: seconds('code', ttl.code, 60, 1, 600),
    accessToken,
    refreshToken: seconds('refreshToken', ttl.refreshToken, 14 * DAY, DAY, 90 * DAY),
    idToken: seconds('idToken', ttl.idToken, 3600, 60, 86_400),
    interaction: seconds('interaction', ttl.interaction, 600, 60, 3600),
  }
  const resources = (options.resources ?? [{ identifier: options.issuer }]).map((resource) => {
    try {
      new URL(resource.identifier)
    } catch {
      throw new TypeError(`The resource ${resource.identifier} is not an absolute URI`)
    }
    if (resource.identifier.includes('#'))
      throw new TypeError('A resource has no fragment (RFC 8707 §2)')
    return {
      identifier: resource.identifier,
      accessTokenFormat: resource.accessTokenFormat ?? 'opaque',
      accessTokenTtlSeconds: seconds(
        'accessToken of a resource',
        resource.accessTokenTtlSeconds,
        accessToken,
        300,
        3600,
      ),
    }
  })
  if (resources.length === 0) throw new TypeError('resources lists at least one resource')
  const grace = options.refreshReuseGraceMs ?? 0
  if (!Number.isInteger(grace) || grace < 0 || grace > 60_000) {
    throw new RangeError('refreshReuseGraceMs is 0 to 60 000 ms')
  }
  const maxFormBytes = options.maxFormBytes ?? 16 * 1024
  if (!Number.isSafeInteger(maxFormBytes) || maxFormBytes < 1024) {
    throw new RangeError('maxFormBytes is at least 1024')
  }
  const paths = options.paths ?? {}
  const observer = options.onEvent
  const onEvent = (event: OAuthEvent): void => {
    if (observer === undefined) return
    try {
      observer(event)
    } catch {
      // An observer's fault must not change what the server answers.
    }
  }
  // A list is checked once here; a registry's answers are checked on every lookup.
  const clients = Array.isArray(options.clients)
    ? staticClients(options.clients as readonly ClientConfig[])
    : checkedRegistry(options.clients as ClientRegistry, (clientId, problem) =>
        onEvent({
          type: 'client_config_invalid',
          code: 'INVALID_CLIENT',
          clientId,
          error: new TypeError(problem),
        }),
      )
  const scopesSupported =
    options.scopesSupported ??
    (Array.isArray(options.clients)
      ? [
          ...new Set(
            (options.clients as readonly ClientConfig[]).flatMap((client) => client.scopes),
          ),
        ]
      : ['openid', 'profile', 'email', 'offline_access'])
  for (const scope of scopesSupported) {
    if (!isValidScope(scope)) throw new TypeError(`scopesSupported: ${scope} is not a valid scope`)
  }
  return {
    issuer: options.issuer,
    clients,
    interactionUrl: options.interactionUrl,
    tokenKey: createHmacKey(tokenKey),
    signingKeys: options.signingKeys,
    signingAlgorithms:
      options.signingKeys === undefined
        ? ['ES256']
        : [...new Set(options.signingKeys.map((key) => key.alg))],
    findAccount: options.findAccount,
    resources,
    ttl: resolvedTtl,
    refreshReuseGraceMs: grace,
    scopesSupported,
    paths: {
      authorize: checkPath(paths.authorize ?? '/authorize'),
      token: checkPath(paths.token ?? '/token'),
      introspect: checkPath(paths.introspect ?? '/oauth/introspect'),
      revoke: checkPath(paths.revoke ?? '/oauth/revoke'),
      jwks: checkPath(paths.jwks ?? '/.well-known/jwks.json'),
      userinfo: checkPath(paths.userinfo ?? '/userinfo'),
    },
    clock: options.clock ?? Date.now,
    random: options.random ?? pooledRandom(),
    onEvent,
    maxFormBytes,
  }
}

/**
 * The URL of an endpoint: the issuer plus the path (no doubled slash).
 *
 * @example
 * ```ts
 * endpointUrl('https://as.example.com/', '/token') // 'https://as.example.com/token'
 * ```
 */
export function endpointUrl(issuer: string, path: string): string {
  return issuer.endsWith('/') ? issuer + path.slice(1) : issuer + path
}
