/**
 * The secrets the server hands out and how it finds them again: authorization codes (32
 * random bytes), opaque tokens `<familyId>.<secret>` (16 and 32 random bytes, base64url), and
 * the keyed hashes the store holds instead of them (HMAC-SHA-256 under the token key), so a
 * leaked store yields no usable credential.
 *
 * @module
 */
import { encodeBase64url } from '@api-blocks/core'
import { type HmacKey, hmacSha256 } from '@api-blocks/core/crypto'

/**
 * Randomness: `bytes` random bytes (the server's `random` option).
 *
 * @example
 * ```ts
 * const random: Random = (bytes) => crypto.getRandomValues(new Uint8Array(bytes))
 * ```
 */
export type Random = (bytes: number) => Uint8Array

const POOL_BYTES = 4096

/**
 * The default randomness: `crypto.getRandomValues` read 4 KiB at a time, since each call costs
 * far more than its bytes (a token request takes about 80 random bytes in three draws). The
 * bytes are the same CSPRNG's; each is handed out once.
 *
 * @example
 * ```ts
 * const random = pooledRandom()
 * random(32) // 32 fresh random bytes
 * ```
 */
export function pooledRandom(): Random {
  let pool = new Uint8Array(0)
  let offset = 0
  return (bytes) => {
    if (bytes > POOL_BYTES) return crypto.getRandomValues(new Uint8Array(bytes))
    if (offset + bytes > pool.byteLength) {
      pool = crypto.getRandomValues(new Uint8Array(POOL_BYTES))
      offset = 0
    }
    const out = pool.slice(offset, offset + bytes)
    // Handed out once: never the same bytes twice.
    pool.fill(0, offset, offset + bytes)
    offset += bytes
    return out
  }
}

/** 22 base64url characters: 16 bytes (128 bits), as every family id and interaction id. */
const FAMILY_ID = /^[A-Za-z0-9_-]{21}[AQgw]$/
/** 43 base64url characters: 32 bytes (256 bits). */
const SECRET = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/

/**
 * A fresh random id of 16 bytes, base64url (22 characters): families, interactions, jti.
 *
 * @example
 * ```ts
 * randomId(random) // 22 base64url characters
 * ```
 */
export function randomId(random: Random): string {
  return encodeBase64url(random(16))
}

/**
 * A fresh secret of 32 bytes, base64url (43 characters): codes and token secrets.
 *
 * @example
 * ```ts
 * randomSecret(random) // 43 base64url characters
 * ```
 */
export function randomSecret(random: Random): string {
  return encodeBase64url(random(32))
}

/**
 * A new opaque token of `familyId`: `<familyId>.<secret>`.
 *
 * @example
 * ```ts
 * opaqueToken(familyId, random) // `${familyId}.<43 characters>`
 * ```
 */
export function opaqueToken(familyId: string, random: Random): string {
  return `${familyId}.${randomSecret(random)}`
}

/**
 * The family id of an opaque token, or `undefined` when `token` is not one (wrong shape or
 * length): the caller then answers without asking the store.
 *
 * @example
 * ```ts
 * familyOfOpaqueToken('AAAAAAAAAAAAAAAAAAAAAA.' + 'A'.repeat(43)) // 'AAAAAAAAAAAAAAAAAAAAAA'
 * familyOfOpaqueToken('nope') // undefined
 * ```
 */
export function familyOfOpaqueToken(token: string): string | undefined {
  if (token.length !== 66 || token[22] !== '.') return undefined
  const familyId = token.slice(0, 22)
  return FAMILY_ID.test(familyId) && SECRET.test(token.slice(23)) ? familyId : undefined
}

/**
 * Whether `code` has the shape of the codes this server makes (43 base64url characters).
 *
 * @example
 * ```ts
 * isCodeShape(randomSecret(random)) // true
 * ```
 */
export function isCodeShape(code: string): boolean {
  return SECRET.test(code)
}

/**
 * Whether `id` has the shape of a family or interaction id (22 base64url characters).
 *
 * @example
 * ```ts
 * isIdShape(randomId(random)) // true
 * ```
 */
export function isIdShape(id: string): boolean {
  return FAMILY_ID.test(id)
}

/**
 * base64url(HMAC-SHA-256(tokenKey, value)): what the store keeps of a code or a token.
 *
 * @example
 * ```ts
 * const tokenHash = await keyedHash(tokenKey, token) // base64url HMAC-SHA-256
 * ```
 */
export async function keyedHash(key: HmacKey, value: string): Promise<string> {
  return encodeBase64url(await hmacSha256(key, value))
}
