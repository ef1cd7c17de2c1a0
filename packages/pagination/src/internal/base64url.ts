/**
 * Strict base64url (RFC 4648 §5) without padding. Strict means: only the URL-safe alphabet, no
 * `=` padding, no whitespace, and the canonical encoding only (the unused low bits of the last
 * character are zero), so that every byte string has exactly one accepted spelling. A cursor
 * re-encoded as standard base64, padded or percent-encoded never decodes.
 *
 * @module
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const LOOKUP = new Int8Array(128).fill(-1)
for (let i = 0; i < ALPHABET.length; i++) LOOKUP[ALPHABET.charCodeAt(i)] = i

/** Encodes bytes as base64url without padding (RFC 4648 §5, §3.2). */
export function encodeBase64url(bytes: Uint8Array): string {
  let out = ''
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out +=
      ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]!
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!
  }
  return out
}

/**
 * Decodes canonical unpadded base64url. Returns `undefined`, never throws, for anything else:
 * a character outside the alphabet, a length that no byte string encodes to (length mod 4 = 1),
 * or non-zero unused bits in the last character (a second spelling of the same bytes).
 */
export function decodeBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.length % 4 === 1) return undefined
  const out = new Uint8Array(Math.floor((text.length * 3) / 4))
  let buffer = 0
  let bits = 0
  let o = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const value = code < 128 ? LOOKUP[code]! : -1
    if (value < 0) return undefined
    buffer = ((buffer << 6) | value) & 0xffff
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out[o++] = (buffer >> bits) & 0xff
    }
  }
  // RFC 4648 §3.5: the pad bits of the last character must be zero in a canonical encoding.
  if ((buffer & ((1 << bits) - 1)) !== 0) return undefined
  return out
}
