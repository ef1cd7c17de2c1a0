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

/** Randomness: `bytes` random bytes (the server's `random` option). */
export type Random = (bytes: number) => Uint8Array

/** 22 base64url characters: 16 bytes (128 bits), as every family id and interaction id. */
const FAMILY_ID = /^[A-Za-z0-9_-]{21}[AQgw]$/
/** 43 base64url characters: 32 bytes (256 bits). */
const SECRET = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/

/** A fresh random id of 16 bytes, base64url (22 characters): families, interactions, jti. */
export function randomId(random: Random): string {
  return encodeBase64url(random(16))
}

/** A fresh secret of 32 bytes, base64url (43 characters): codes and token secrets. */
export function randomSecret(random: Random): string {
  return encodeBase64url(random(32))
}

/** A new opaque token of `familyId`: `<familyId>.<secret>`. */
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

/** Whether `code` has the shape of the codes this server makes (43 base64url characters). */
export function isCodeShape(code: string): boolean {
  return SECRET.test(code)
}

/** Whether `id` has the shape of a family or interaction id (22 base64url characters). */
export function isIdShape(id: string): boolean {
  return FAMILY_ID.test(id)
}

/** base64url(HMAC-SHA-256(tokenKey, value)): what the store keeps of a code or a token. */
export async function keyedHash(key: HmacKey, value: string): Promise<string> {
  return encodeBase64url(await hmacSha256(key, value))
}
