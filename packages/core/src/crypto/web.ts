/**
 * SHA-256, HMAC-SHA-256 and constant-time comparison on Web Crypto (`crypto.subtle`): the build
 * every runtime without the `node` export condition gets (Workers, browsers). Same API and
 * results as the node:crypto build.
 *
 * @module
 */
import { encodeBase64url } from '../base64.ts'
import type { CryptoInput, HmacKey } from './types.ts'

export type { CryptoInput, HmacKey } from './types.ts'

const encoder = new TextEncoder()
const HMAC = { name: 'HMAC', hash: 'SHA-256' } as const

function bytesOf(data: CryptoInput): Uint8Array<ArrayBuffer> {
  return (typeof data === 'string' ? encoder.encode(data) : data) as Uint8Array<ArrayBuffer>
}

/**
 * SHA-256 of `data` (a string is hashed as its UTF-8).
 *
 * @example
 * ```ts
 * const digest = await sha256('abc') // 32 bytes, ba7816bf…
 * ```
 */
export async function sha256(data: CryptoInput): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytesOf(data)))
}

/**
 * SHA-256 of `data` as unpadded base64url (RFC 4648 §5): 43 characters.
 *
 * @example
 * ```ts
 * await sha256Base64url('abc') // 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0'
 * ```
 */
export async function sha256Base64url(data: CryptoInput): Promise<string> {
  return encodeBase64url(await sha256(data))
}

class WebHmacKey implements HmacKey {
  readonly algorithm = 'HMAC-SHA-256' as const
  readonly #secret: Uint8Array<ArrayBuffer>
  #key: Promise<CryptoKey> | undefined
  constructor(secret: Uint8Array) {
    // A copy: later changes to the caller's array must not change the key.
    this.#secret = new Uint8Array(secret)
  }
  get key(): Promise<CryptoKey> {
    this.#key ??= crypto.subtle.importKey('raw', this.#secret, HMAC, false, ['sign', 'verify'])
    return this.#key
  }
}

/**
 * Makes an HMAC-SHA-256 key from secret bytes, once (RFC 2104 §3: use at least 32 bytes). The
 * `CryptoKey` is imported on first use and kept.
 *
 * @example
 * ```ts
 * const key = createHmacKey(crypto.getRandomValues(new Uint8Array(32)))
 * ```
 */
export function createHmacKey(secret: Uint8Array): HmacKey {
  if (!(secret instanceof Uint8Array) || secret.byteLength === 0) {
    throw new TypeError('An HMAC secret is a non-empty Uint8Array')
  }
  return new WebHmacKey(secret)
}

function keyOf(key: HmacKey): Promise<CryptoKey> {
  if (!(key instanceof WebHmacKey)) throw new TypeError('Not a key made by createHmacKey()')
  return key.key
}

/**
 * HMAC-SHA-256 (RFC 2104) of `data` under `key`: 32 bytes.
 *
 * @example
 * ```ts
 * const mac = await hmacSha256(key, 'v1.payload')
 * ```
 */
export async function hmacSha256(key: HmacKey, data: CryptoInput): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign(HMAC, await keyOf(key), bytesOf(data)))
}

/**
 * Whether `mac` is the HMAC-SHA-256 of `data` under `key`. `crypto.subtle.verify` compares in
 * constant time (it recomputes the MAC and compares the whole of it).
 *
 * @example
 * ```ts
 * if (!(await verifyHmacSha256(key, payload, mac))) throw new Error('forged')
 * ```
 */
export async function verifyHmacSha256(
  key: HmacKey,
  data: CryptoInput,
  mac: Uint8Array,
): Promise<boolean> {
  return crypto.subtle.verify(HMAC, await keyOf(key), mac as Uint8Array<ArrayBuffer>, bytesOf(data))
}

/**
 * Whether two byte strings are equal, in time that depends only on their lengths, never on
 * where they differ. Arrays of different lengths are unequal (the length is not secret).
 *
 * @example
 * ```ts
 * timingSafeEqual(expectedMac, receivedMac)
 * ```
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false
  let difference = 0
  for (let index = 0; index < a.byteLength; index++) difference |= a[index]! ^ b[index]!
  return difference === 0
}
