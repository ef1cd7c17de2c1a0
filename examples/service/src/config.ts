// Configuration read from the environment at start: what several instances must agree on (the
// keys that sign cursors, the public URL) comes from here, never from per-process randomness or
// from requests. Anything invalid stops the start with a message naming the variable.
import { createPrivateKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ApiBlocksError, decodeBase64url } from '@api-blocks/core'
import type { CursorKey } from '@api-blocks/pagination'
import { MIN_SECRET_BYTES } from '@api-blocks/pagination'

/** A setting the service cannot start with. */
export class ConfigError extends ApiBlocksError<'INVALID_CONFIG'> {
  static override readonly kind: string = 'example-service.ConfigError'

  constructor(message: string) {
    super('INVALID_CONFIG', message)
  }
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/
/** More keys than a rotation needs is a mistake (each is tried on every bad cursor). */
const MAX_CURSOR_KEYS = 8

/**
 * `CURSOR_SECRET`: the keys that sign list cursors, newest first, comma-separated, each
 * `<id>:<secret>`. The id (1 to 32 of `A-Z a-z 0-9 _ -`) travels in every cursor and names
 * the key that verifies it; the secret is at least 32 random bytes in unpadded base64url
 * (43 characters for 32 bytes). The first key signs; every key verifies. To rotate: put a new
 * key first on every instance, and remove the old one a cursor lifetime (24 hours) later.
 *
 * @example
 * ```ts
 * parseCursorKeys('2026-06:3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,2026-01:…')
 * // [{ id: '2026-06', secret: Uint8Array(32) }, { id: '2026-01', … }]
 * ```
 */
export function parseCursorKeys(text: string): CursorKey[] {
  const entries = text.split(',').map((entry) => entry.trim())
  if (entries.length > MAX_CURSOR_KEYS) {
    throw new ConfigError(`CURSOR_SECRET holds ${entries.length} keys; at most ${MAX_CURSOR_KEYS}.`)
  }
  const keys: CursorKey[] = []
  for (const [index, entry] of entries.entries()) {
    const where = `CURSOR_SECRET key ${index + 1}`
    const colon = entry.indexOf(':')
    if (colon < 0) {
      throw new ConfigError(
        `${where} must be <id>:<secret> (e.g. 2026-06:<43 base64url characters>).`,
      )
    }
    const id = entry.slice(0, colon)
    if (!KEY_ID.test(id)) {
      throw new ConfigError(
        `${where}: the id must be 1 to 32 of A-Z a-z 0-9 _ - (got "${id.slice(0, 40)}").`,
      )
    }
    if (keys.some((key) => key.id === id))
      throw new ConfigError(`${where}: the id "${id}" is used twice.`)
    const secret = decodeBase64url(entry.slice(colon + 1))
    if (secret === undefined) {
      throw new ConfigError(`${where} ("${id}"): the secret is not unpadded base64url.`)
    }
    if (secret.byteLength < MIN_SECRET_BYTES) {
      throw new ConfigError(
        `${where} ("${id}"): the secret is ${secret.byteLength} bytes; at least ${MIN_SECRET_BYTES} (43 base64url characters).`,
      )
    }
    keys.push({ id, secret })
  }
  return keys
}

/**
 * `PUBLIC_URL`: where clients reach the service, `http(s)://host[:port][/base path]`, without
 * credentials, query or fragment. Returned without a trailing slash, ready to put a path after.
 *
 * @example
 * ```ts
 * parsePublicUrl('https://api.example.com/') // 'https://api.example.com'
 * ```
 */
export function parsePublicUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new ConfigError(
      `PUBLIC_URL must be an absolute URL such as https://api.example.com (got "${text.slice(0, 100)}").`,
    )
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`PUBLIC_URL must be http or https (got ${url.protocol}).`)
  }
  if (
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== '' ||
    text.includes('#') ||
    text.includes('?')
  ) {
    throw new ConfigError('PUBLIC_URL must not carry credentials, a query or a fragment.')
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/**
 * `OAUTH_TOKEN_KEY`: the HMAC key under which the authorisation server stores codes and tokens
 * (hashed), at least 32 random bytes in unpadded base64url. Every instance that shares the
 * OAuth store needs the same key, or a token issued by one is unknown to the others.
 *
 * @example
 * ```ts
 * parseTokenKey('3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA') // Uint8Array(32)
 * ```
 */
export function parseTokenKey(text: string): Uint8Array {
  const key = decodeBase64url(text.trim())
  if (key === undefined) throw new ConfigError('OAUTH_TOKEN_KEY is not unpadded base64url.')
  if (key.byteLength < 32) {
    throw new ConfigError(
      `OAUTH_TOKEN_KEY is ${key.byteLength} bytes; at least 32 (43 base64url characters).`,
    )
  }
  return key
}

/** A key that signs ID tokens and JWT access tokens: the SigningKey of @api-blocks/oauth. */
export interface ConfiguredSigningKey {
  kid: string
  alg: 'ES256' | 'RS256'
  privateJwk: { kty: string } & Record<string, string>
}

const MAX_SIGNING_KEYS = 8
const KID = /^[A-Za-z0-9._-]{1,64}$/
const EC_MEMBERS = ['x', 'y', 'd'] as const
const RSA_MEMBERS = ['n', 'e', 'd', 'p', 'q', 'dp', 'dq', 'qi'] as const

/**
 * `OAUTH_SIGNING_KEYS`: the private keys that sign ID tokens and JWT access tokens, first
 * signs, all published in the JWKS (so a key is rotated in by putting it second, then first
 * once caches have it, and out once no token it signed is alive). A JSON array of private
 * JWKs, each with `kid` and `alg` (ES256 on P-256, or RS256 of at least 2048 bits), given
 * inline or as the path of a file that holds it.
 *
 * @example
 * ```ts
 * parseSigningKeys('[{"kid":"2026-06","alg":"ES256","kty":"EC","crv":"P-256","x":"…","y":"…","d":"…"}]')
 * ```
 */
export function parseSigningKeys(text: string): ConfiguredSigningKey[] {
  let source = text.trim()
  if (!source.startsWith('[')) {
    try {
      const bytes = readFileSync(source)
      if (bytes.byteLength > 1024 * 1024)
        throw new ConfigError('OAUTH_SIGNING_KEYS: the file is over 1 MiB.')
      source = bytes.toString('utf8')
    } catch (error) {
      if (error instanceof ConfigError) throw error
      throw new ConfigError(
        'OAUTH_SIGNING_KEYS must be a JSON array of private JWKs, or the path of a file holding one.',
      )
    }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(source)
  } catch {
    throw new ConfigError('OAUTH_SIGNING_KEYS is not valid JSON.')
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > MAX_SIGNING_KEYS) {
    throw new ConfigError(
      `OAUTH_SIGNING_KEYS must be an array of 1 to ${MAX_SIGNING_KEYS} private JWKs.`,
    )
  }
  const keys: ConfiguredSigningKey[] = []
  for (const [index, entry] of parsed.entries()) {
    const where = `OAUTH_SIGNING_KEYS key ${index + 1}`
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new ConfigError(`${where} is not a JWK object.`)
    }
    const jwk = entry as Record<string, unknown>
    const kid = jwk['kid']
    if (typeof kid !== 'string' || !KID.test(kid)) {
      throw new ConfigError(`${where}: "kid" must be 1 to 64 of A-Z a-z 0-9 . _ -.`)
    }
    if (keys.some((key) => key.kid === kid))
      throw new ConfigError(`${where}: the kid "${kid}" is used twice.`)
    const alg = jwk['alg']
    const members =
      alg === 'ES256' && jwk['kty'] === 'EC' && jwk['crv'] === 'P-256'
        ? EC_MEMBERS
        : alg === 'RS256' && jwk['kty'] === 'RSA'
          ? RSA_MEMBERS
          : undefined
    if (members === undefined) {
      throw new ConfigError(
        `${where} ("${kid}"): "alg" must be ES256 (kty EC, crv P-256) or RS256 (kty RSA).`,
      )
    }
    for (const member of members) {
      if (typeof jwk[member] !== 'string' || decodeBase64url(jwk[member] as string) === undefined) {
        throw new ConfigError(
          `${where} ("${kid}"): "${member}" is missing or not base64url (a private key is needed).`,
        )
      }
    }
    const privateJwk: { kty: string } & Record<string, string> = { kty: jwk['kty'] as string }
    if (alg === 'ES256') privateJwk['crv'] = 'P-256'
    for (const member of members) privateJwk[member] = jwk[member] as string
    try {
      const key = createPrivateKey({ key: privateJwk, format: 'jwk' })
      if (alg === 'RS256' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
        throw new ConfigError(`${where} ("${kid}"): an RSA key must have at least 2048 bits.`)
      }
    } catch (error) {
      if (error instanceof ConfigError) throw error
      throw new ConfigError(`${where} ("${kid}"): not a valid private key.`)
    }
    keys.push({ kid, alg: alg as 'ES256' | 'RS256', privateJwk })
  }
  return keys
}

/** `ACCESS_TOKEN_FORMAT`: `opaque` (default) or `jwt`. */
export function parseAccessTokenFormat(text: string): 'opaque' | 'jwt' {
  if (text === 'opaque' || text === 'jwt') return text
  throw new ConfigError(`ACCESS_TOKEN_FORMAT must be opaque or jwt (got "${text.slice(0, 40)}").`)
}

/**
 * The webhook settings of the environment (docs/service.md, "Webhooks"): the retry schedule,
 * the attempt deadline and the private origins a receiver may have.
 */
export interface WebhookSettings {
  /**
   * The exponential policy (docs/spec.md §3.1: `min(base × 2^attempt, max) × U(0.5, 1.5)`),
   * when any of `WEBHOOK_RETRY_BASE_MS`, `WEBHOOK_RETRY_MAX_MS`, `WEBHOOK_MAX_ATTEMPTS` is set
   * (the others default to 1 minute, 24 hours and 7 attempts); `undefined` for the typical
   * schedule (`retrySchedules.typical`: at once, 1 min, 10 min, 1 h, 6 h, 12 h, 24 h).
   */
  retry: { baseMs: number; maxMs: number; maxAttempts: number } | undefined
  /** `WEBHOOK_TIMEOUT_MS`: the deadline of one attempt (the sender's default, 10 s, when absent). */
  timeoutMs: number | undefined
  /**
   * `WEBHOOK_ALLOWED_PRIVATE_ORIGINS`: exact origins (`http://127.0.0.1:4000`) the SSRF guard
   * lets through although they are private or loopback; a local receiver's, for development.
   */
  allowedOrigins: string[]
}

/** The environment variables {@link parseWebhookSettings} reads. */
export interface WebhookEnvironment {
  WEBHOOK_RETRY_BASE_MS?: string | undefined
  WEBHOOK_RETRY_MAX_MS?: string | undefined
  WEBHOOK_MAX_ATTEMPTS?: string | undefined
  WEBHOOK_TIMEOUT_MS?: string | undefined
  WEBHOOK_ALLOWED_PRIVATE_ORIGINS?: string | undefined
}

/** A day: no delay between two attempts is longer (the typical schedule's last is 24 h). */
const MAX_RETRY_MS = 24 * 60 * 60 * 1000
/** The exponential policy's first delay when only the cap or the attempts are set. */
const DEFAULT_BASE_MS = 60_000
/** Attempts when only the delays are set: as many as the typical schedule makes. */
const DEFAULT_ATTEMPTS = 7
/** More attempts than a retry window of days needs is a mistake. */
const MAX_ATTEMPTS = 50
/** The deadline of one attempt: a receiver is asked to answer fast (docs/spec.md §6). */
const MAX_TIMEOUT_MS = 60_000
/** More allowed origins than a development set-up needs is a mistake. */
const MAX_ALLOWED_ORIGINS = 16

function whole(
  env: WebhookEnvironment,
  name: keyof WebhookEnvironment,
  max: number,
): number | undefined {
  const text = env[name]
  if (text === undefined || text === '') return undefined
  const value = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new ConfigError(
      `${name} must be a whole number from 1 to ${max}, got "${text.slice(0, 40)}".`,
    )
  }
  return value
}

/**
 * Reads `WEBHOOK_RETRY_BASE_MS`, `WEBHOOK_RETRY_MAX_MS`, `WEBHOOK_MAX_ATTEMPTS`,
 * `WEBHOOK_TIMEOUT_MS` and `WEBHOOK_ALLOWED_PRIVATE_ORIGINS` (comma-separated exact origins:
 * scheme, host and port, no path). Anything invalid is a {@link ConfigError} naming the
 * variable.
 *
 * @example
 * ```ts
 * parseWebhookSettings({ WEBHOOK_RETRY_BASE_MS: '10', WEBHOOK_MAX_ATTEMPTS: '3' })
 * // { retry: { baseMs: 10, maxMs: 86400000, maxAttempts: 3 }, timeoutMs: undefined, allowedOrigins: [] }
 * ```
 */
export function parseWebhookSettings(env: WebhookEnvironment): WebhookSettings {
  const baseMs = whole(env, 'WEBHOOK_RETRY_BASE_MS', MAX_RETRY_MS)
  const maxMs = whole(env, 'WEBHOOK_RETRY_MAX_MS', MAX_RETRY_MS)
  const maxAttempts = whole(env, 'WEBHOOK_MAX_ATTEMPTS', MAX_ATTEMPTS)
  if (baseMs !== undefined && maxMs !== undefined && maxMs < baseMs) {
    throw new ConfigError(
      `WEBHOOK_RETRY_MAX_MS (${maxMs}) must not be below WEBHOOK_RETRY_BASE_MS (${baseMs}).`,
    )
  }
  const custom = baseMs !== undefined || maxMs !== undefined || maxAttempts !== undefined
  const allowedOrigins: string[] = []
  const list = env.WEBHOOK_ALLOWED_PRIVATE_ORIGINS ?? ''
  for (const entry of list.split(',').map((item) => item.trim())) {
    if (entry === '') continue
    let origin: string | undefined
    try {
      const url = new URL(entry)
      if (url.protocol === 'http:' || url.protocol === 'https:') origin = url.origin
    } catch {
      origin = undefined
    }
    // Exact origins only: `http://127.0.0.1:4000`, as the URL standard serialises it (no
    // path, no trailing slash, no credentials), so what is allowed is what is written.
    if (origin !== entry) {
      throw new ConfigError(
        `WEBHOOK_ALLOWED_PRIVATE_ORIGINS: "${entry.slice(0, 100)}" is not an origin such as http://127.0.0.1:4000 (scheme, host and port; no path).`,
      )
    }
    if (!allowedOrigins.includes(origin)) allowedOrigins.push(origin)
  }
  if (allowedOrigins.length > MAX_ALLOWED_ORIGINS) {
    throw new ConfigError(
      `WEBHOOK_ALLOWED_PRIVATE_ORIGINS holds ${allowedOrigins.length} origins; at most ${MAX_ALLOWED_ORIGINS}.`,
    )
  }
  return {
    retry: custom
      ? {
          baseMs: baseMs ?? Math.min(DEFAULT_BASE_MS, maxMs ?? DEFAULT_BASE_MS),
          maxMs: maxMs ?? MAX_RETRY_MS,
          maxAttempts: maxAttempts ?? DEFAULT_ATTEMPTS,
        }
      : undefined,
    timeoutMs: whole(env, 'WEBHOOK_TIMEOUT_MS', MAX_TIMEOUT_MS),
    allowedOrigins,
  }
}

/** The GraphQL settings of the environment (docs/service.md, "GraphQL"). */
export interface GraphQLSettings {
  /** `GRAPHQL_PERSISTED_QUERIES`: `apq` (default), `allow-list` or `off` (false). */
  persistedQueries: 'apq' | 'allow-list' | false
  /**
   * `GRAPHQL_PERSISTED_MANIFEST`: the manifest's JSON (an Apollo persisted query manifest, or a
   * `{ "<id>": "<document>" }` map), read from the file it names; required with `allow-list`.
   */
  manifest: unknown
  /** `GRAPHQL_INTROSPECTION` (`true` or `false`): default on, off when NODE_ENV is production. */
  introspection: boolean
}

/** The environment variables {@link parseGraphQLSettings} reads. */
export interface GraphQLEnvironment {
  GRAPHQL_PERSISTED_QUERIES?: string | undefined
  GRAPHQL_PERSISTED_MANIFEST?: string | undefined
  GRAPHQL_INTROSPECTION?: string | undefined
  NODE_ENV?: string | undefined
}

/** A manifest larger than this is a mistake (a build's operations are kilobytes each). */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024

/**
 * Reads `GRAPHQL_PERSISTED_QUERIES`, `GRAPHQL_PERSISTED_MANIFEST` and `GRAPHQL_INTROSPECTION`.
 * Anything invalid is a {@link ConfigError} naming the variable.
 *
 * @example
 * ```ts
 * parseGraphQLSettings({ GRAPHQL_PERSISTED_QUERIES: 'allow-list', GRAPHQL_PERSISTED_MANIFEST: 'ops.json' })
 * // { persistedQueries: 'allow-list', manifest: { format: 'apollo-persisted-query-manifest', … }, introspection: true }
 * ```
 */
export function parseGraphQLSettings(env: GraphQLEnvironment): GraphQLSettings {
  const mode = env.GRAPHQL_PERSISTED_QUERIES || 'apq'
  if (mode !== 'apq' && mode !== 'allow-list' && mode !== 'off') {
    throw new ConfigError(
      `GRAPHQL_PERSISTED_QUERIES must be apq, allow-list or off (got "${mode.slice(0, 40)}").`,
    )
  }
  const introspection =
    env.GRAPHQL_INTROSPECTION || (env.NODE_ENV === 'production' ? 'false' : 'true')
  if (introspection !== 'true' && introspection !== 'false') {
    throw new ConfigError(
      `GRAPHQL_INTROSPECTION must be true or false (got "${introspection.slice(0, 40)}").`,
    )
  }
  const path = env.GRAPHQL_PERSISTED_MANIFEST
  let manifest: unknown
  if (path) {
    let text: string
    try {
      const bytes = readFileSync(path)
      if (bytes.byteLength > MAX_MANIFEST_BYTES) {
        throw new ConfigError('GRAPHQL_PERSISTED_MANIFEST: the file is over 16 MiB.')
      }
      text = bytes.toString('utf8')
    } catch (error) {
      if (error instanceof ConfigError) throw error
      throw new ConfigError(`GRAPHQL_PERSISTED_MANIFEST: cannot read "${path.slice(0, 200)}".`)
    }
    try {
      manifest = JSON.parse(text)
    } catch {
      throw new ConfigError('GRAPHQL_PERSISTED_MANIFEST is not valid JSON.')
    }
  } else if (mode === 'allow-list') {
    throw new ConfigError(
      'GRAPHQL_PERSISTED_MANIFEST must name the manifest of the allowed operations when GRAPHQL_PERSISTED_QUERIES is allow-list.',
    )
  }
  return {
    persistedQueries: mode === 'off' ? false : mode,
    manifest,
    introspection: introspection === 'true',
  }
}
