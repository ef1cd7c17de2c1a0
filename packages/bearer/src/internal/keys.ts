/**
 * Where a JWT verifier gets its keys: a static list of public JWKs (checked here), or a JWKS
 * URL (see `remote-jwks.ts`: cached, refetched at most once per cooldown, one fetch in flight,
 * a timeout and a size cap, stale keys kept for a bounded grace during an outage).
 *
 * @module
 */
import type { JSONWebKeySet, JWK, JWTVerifyGetKey } from 'jose'
import { createLocalJWKSet, errors } from 'jose'
import { BearerError } from '../error.ts'
import type { JsonWebKeyLike, JwtVerificationOptions } from '../options.ts'
import { checkFetchUrl } from './http-url.ts'
import { remoteJwks } from './remote-jwks.ts'

// RFC 7518 §6.2.2, §6.3.2, §6.4: members that only a private or symmetric key has.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const

// RFC 7518 §6.2.1, §6.3.1 and RFC 8037 §2: what a public key of each type is made of.
const PUBLIC_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'x', 'y'],
  RSA: ['n', 'e'],
  OKP: ['crv', 'x'],
}

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
    if (member in key) {
      throw new TypeError(`jwt.keys[${index}] is a private key: give its public part`)
    }
  }
  const members = PUBLIC_MEMBERS[key.kty]
  if (members === undefined) throw new TypeError(`jwt.keys[${index}] has an unsupported kty`)
  for (const member of members) {
    if (typeof key[member] !== 'string') {
      throw new TypeError(`jwt.keys[${index}] has no ${member} member`)
    }
  }
  return key as JWK
}

function checkDuration(
  value: number | undefined,
  fallback: number,
  name: string,
  least: number,
): number {
  const duration = value ?? fallback
  if (!Number.isInteger(duration) || duration < least) {
    throw new RangeError(`jwt.${name} must be a whole number of at least ${least}, got ${duration}`)
  }
  return duration
}

/** @internal The key resolver of `options`, checked; throws a TypeError or RangeError on bad configuration. */
export function keyResolver(options: JwtVerificationOptions, clock: () => number): JWTVerifyGetKey {
  if ((options.keys === undefined) === (options.jwksUrl === undefined)) {
    throw new TypeError('jwt needs exactly one of jwksUrl and keys')
  }
  if (options.keys !== undefined) {
    if (options.keys.length === 0) throw new TypeError('jwt.keys is empty')
    const set: JSONWebKeySet = { keys: options.keys.map(checkPublicKey) }
    return createLocalJWKSet(set)
  }
  const url = checkFetchUrl(
    options.jwksUrl as string | URL,
    'jwt.jwksUrl',
    options.allowInsecureHttp,
  )
  return keySelectionErrorsOnly(
    remoteJwks({
      url: url.href,
      fetch: options.fetch,
      timeoutMs: checkDuration(options.jwksTimeoutMs, 5000, 'jwksTimeoutMs', 1),
      cooldownMs: checkDuration(options.jwksCooldownMs, 30_000, 'jwksCooldownMs', 1000),
      maxAgeMs: checkDuration(options.jwksCacheMaxAgeMs, 600_000, 'jwksCacheMaxAgeMs', 0),
      clock,
    }),
  )
}

// The token's fault (no usable key) passes as jose's error; anything else (a key of the set
// that cannot be imported, a fetch that failed) is the authorisation server's: JWKS_UNAVAILABLE.
function keySelectionErrorsOnly(getKey: JWTVerifyGetKey): JWTVerifyGetKey {
  return async (header, token) => {
    try {
      return await getKey(header, token)
    } catch (error) {
      if (error instanceof BearerError) throw error
      if (error instanceof errors.JOSEError && KEY_SELECTION_CODES.has(error.code)) throw error
      throw new BearerError('JWKS_UNAVAILABLE', 'The JWKS could not be fetched.', { cause: error })
    }
  }
}
