/**
 * SHA-256, HMAC-SHA-256 and constant-time comparison on node:crypto: the build the `node`
 * export condition selects (Node, and Bun and Deno, which implement node:crypto). Hashing
 * answers in place (about 1 µs for a few hundred bytes) where `crypto.subtle.digest` hops to the
 * thread pool and back (about 25 µs a call on Node 24). An HMAC is computed from the key's inner
 * and outer pads, made once, as two one-shot `hash()` calls (RFC 2104 §2): a `createHmac` per
 * call, even with a `KeyObject`, builds and frees an Hmac object each time, which was a fifth of
 * the OAuth introspection handler's time in `npm run bench -- oauth` (docs/benchmarks.md,
 * issue 14). Same API and results as the Web Crypto build.
 *
 * @module
 */
import { createHash, hash, timingSafeEqual as nodeTimingSafeEqual } from 'node:crypto'
import type { CryptoInput, HmacKey } from './types.ts'

export type { CryptoInput, HmacKey } from './types.ts'

// A copy of a Buffer into a plain Uint8Array of its own: small Buffers may share Node's pool.
function own(buffer: Uint8Array): Uint8Array {
  return new Uint8Array(buffer)
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
  return own(hash('sha256', data, 'buffer'))
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
  return hash('sha256', data, 'base64url')
}

/** SHA-256's block size in bytes (FIPS 180-4 §5.1.2): the length of the HMAC pads. */
const BLOCK = 64
/**
 * The longest message MACed in the key's own buffer; longer ones are hashed in pieces. 4 KiB,
 * not 1: a Standard Webhooks signature of a 1 KiB body MACs `id.timestamp.` plus the body
 * (about 1,064 bytes), which the streaming path made 7 % slower (`npm run bench --
 * webhook-signature`, sign 1 KiB: 1.26× to 1.18× of a bare createHmac; docs/benchmarks.md,
 * issue 15). The cost is 4 KiB per key.
 */
const SCRATCH = 4096

class NodeHmacKey implements HmacKey {
  readonly algorithm = 'HMAC-SHA-256' as const
  /** The inner pad (K XOR ipad), then room for a message of up to SCRATCH bytes. */
  readonly #inner: Buffer
  /** The outer pad (K XOR opad), then room for the inner digest. */
  readonly #outer: Buffer

  constructor(secret: Uint8Array) {
    // RFC 2104 §2: a key longer than the block is hashed first; a shorter one is padded with zeros.
    const key = secret.byteLength > BLOCK ? hash('sha256', secret, 'buffer') : secret
    this.#inner = Buffer.alloc(BLOCK + SCRATCH, 0x36)
    this.#outer = Buffer.alloc(BLOCK + 32, 0x5c)
    for (let index = 0; index < key.byteLength; index += 1) {
      this.#inner[index]! ^= key[index]!
      this.#outer[index]! ^= key[index]!
    }
  }

  // RFC 2104 §2: H(K XOR opad, H(K XOR ipad, text)). A short message is written after the inner
  // pad in this key's buffer and hashed in one call (synchronous: no other MAC can use the
  // buffer meanwhile), then wiped; a longer one goes through a streaming hash.
  mac(data: CryptoInput): Buffer {
    const inner = this.#inner
    let innerDigest: Buffer
    // A string takes at most 3 bytes of UTF-8 per UTF-16 unit (a lone surrogate: U+FFFD).
    // Anything but a string or a Uint8Array (a DataView from JavaScript) takes the plain path,
    // which accepts or refuses it as createHash does.
    const short =
      typeof data === 'string'
        ? data.length * 3 <= SCRATCH
        : data instanceof Uint8Array && data.byteLength <= SCRATCH
    if (short) {
      let length = data.length
      if (typeof data === 'string') length = inner.write(data, BLOCK, 'utf8')
      else inner.set(data, BLOCK)
      innerDigest = hash('sha256', inner.subarray(0, BLOCK + length), 'buffer')
      inner.fill(0, BLOCK, BLOCK + length)
    } else {
      innerDigest = createHash('sha256').update(inner.subarray(0, BLOCK)).update(data).digest()
    }
    this.#outer.set(innerDigest, BLOCK)
    return hash('sha256', this.#outer, 'buffer')
  }
}

/**
 * Makes an HMAC-SHA-256 key from secret bytes, once (RFC 2104 §3: use at least 32 bytes).
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
  return new NodeHmacKey(secret)
}

function keyOf(key: HmacKey): NodeHmacKey {
  if (!(key instanceof NodeHmacKey)) throw new TypeError('Not a key made by createHmacKey()')
  return key
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
  return own(keyOf(key).mac(data))
}

/**
 * Whether `mac` is the HMAC-SHA-256 of `data` under `key`, compared in constant time.
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
  return timingSafeEqual(keyOf(key).mac(data), mac)
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
  return a.byteLength === b.byteLength && nodeTimingSafeEqual(a, b)
}
