/**
 * Where a JWT verifier gets its keys: a static list of public JWKs, or a JWKS URL fetched by
 * jose's `createRemoteJWKSet` (cached for `cacheMaxAge`, refetched on an unknown `kid` at most
 * once per `cooldownDuration`, one fetch in flight, aborted after `timeoutDuration`), here with
 * a cap on the response size added through its custom fetch.
 *
 * @module
 */
import { readStream } from '@api-blocks/core'
import type { JSONWebKeySet, JWK, JWTVerifyGetKey } from 'jose'
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors } from 'jose'
import { BearerError } from '../error.ts'
import type { BearerFetch, JsonWebKeyLike, JwtVerificationOptions } from '../options.ts'

/** @internal The largest JWKS document read, in bytes. A set of a few keys is a few KiB. */
export const MAX_JWKS_BYTES: number = 64 * 1024

// RFC 7518 §6.2.2, §6.3.2, §6.4: members that only a private or symmetric key has.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const

// What jose throws when a token names no usable key: the token's fault, not the JWKS's.
const KEY_SELECTION_CODES: ReadonlySet<string> = new Set([
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
  'ERR_JOSE_NOT_SUPPORTED',
])

function checkPublicKey(key: JsonWebKeyLike, index: number): JWK {
  if (typeof key !== 'object' || key === null || typeof key.kty !== 'string') {
    throw new TypeError(`jwt.keys[${index}] is not a JWK`)
  }
  if (key.kty === 'oct') throw new TypeError(`jwt.keys[${index}] is a symmetric key`)
  for (const member of PRIVATE_MEMBERS) {
    if (member in key)
      throw new TypeError(`jwt.keys[${index}] is a private key: give its public part`)
  }
  return key as JWK
}

function checkDuration(value: number | undefined, fallback: number, name: string): number {
  const duration = value ?? fallback
  if (!Number.isInteger(duration) || duration < 0) {
    throw new RangeError(`jwt.${name} must be a whole number of at least 0, got ${duration}`)
  }
  return duration
}

function cappedFetch(fetchImpl: BearerFetch | undefined): BearerFetch {
  return async (url, init) => {
    const response = await (fetchImpl ?? (globalThis.fetch as BearerFetch))(url, init)
    if (response.status !== 200 || response.body === null) {
      await response.body?.cancel().catch(() => undefined)
      return new Response(null, { status: response.status === 200 ? 502 : response.status })
    }
    const bytes = await readStream(response.body, MAX_JWKS_BYTES)
    return new Response(new TextDecoder().decode(bytes), { status: 200, headers: response.headers })
  }
}

/** @internal The key resolver of `options`, checked; throws a TypeError or RangeError on bad configuration. */
export function keyResolver(options: JwtVerificationOptions): JWTVerifyGetKey {
  if ((options.keys === undefined) === (options.jwksUrl === undefined)) {
    throw new TypeError('jwt needs exactly one of jwksUrl and keys')
  }
  if (options.keys !== undefined) {
    if (options.keys.length === 0) throw new TypeError('jwt.keys is empty')
    const set: JSONWebKeySet = { keys: options.keys.map(checkPublicKey) }
    return createLocalJWKSet(set)
  }
  const url = new URL(options.jwksUrl as string | URL)
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`jwt.jwksUrl must be an http(s) URL, got ${url.protocol}`)
  }
  const remote = createRemoteJWKSet(url, {
    timeoutDuration: checkDuration(options.jwksTimeoutMs, 5000, 'jwksTimeoutMs'),
    cooldownDuration: checkDuration(options.jwksCooldownMs, 30_000, 'jwksCooldownMs'),
    cacheMaxAge: checkDuration(options.jwksCacheMaxAgeMs, 600_000, 'jwksCacheMaxAgeMs'),
    [customFetch]: cappedFetch(options.fetch),
  })
  return async (header, token) => {
    try {
      return await remote(header, token)
    } catch (error) {
      if (error instanceof errors.JOSEError && KEY_SELECTION_CODES.has(error.code)) throw error
      throw new BearerError('JWKS_UNAVAILABLE', 'The JWKS could not be fetched.', { cause: error })
    }
  }
}
