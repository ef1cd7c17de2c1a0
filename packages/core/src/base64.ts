/**
 * Strict base64 (RFC 4648 §4) and base64url (RFC 4648 §5). Strict means: only the alphabet of
 * the form, padding exactly where that form has it (base64 always pads, base64url never does),
 * no whitespace, and the canonical encoding only (the unused low bits of the last character
 * are zero), so that every byte string has exactly one accepted spelling. A cursor or token
 * re-encoded as standard base64, padded or percent-encoded never decodes as base64url.
 *
 * Decoders answer `undefined`, never throw: the input usually comes from the network.
 *
 * @module
 */

const URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const STD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

function lookup(alphabet: string): Int8Array {
  const table = new Int8Array(128).fill(-1)
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i
  return table
}
const URL_LOOKUP = lookup(URL_ALPHABET)
const STD_LOOKUP = lookup(STD_ALPHABET)

function encode(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  let out = ''
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out +=
      alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + alphabet[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + (pad ? '==' : '')
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out +=
      alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + (pad ? '=' : '')
  }
  return out
}

function decode(
  text: string,
  table: Int8Array,
  loose = false,
): Uint8Array<ArrayBuffer> | undefined {
  if (text.length % 4 === 1) return undefined
  const out = new Uint8Array(Math.floor((text.length * 3) / 4))
  let buffer = 0
  let bits = 0
  let o = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const value = code < 128 ? table[code]! : -1
    if (value < 0) return undefined
    buffer = ((buffer << 6) | value) & 0xffff
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out[o++] = (buffer >> bits) & 0xff
    }
  }
  // RFC 4648 §3.5: the pad bits of the last character must be zero in a canonical encoding.
  if (!loose && (buffer & ((1 << bits) - 1)) !== 0) return undefined
  return out
}

/**
 * Encodes bytes as base64url without padding (RFC 4648 §5, §3.2).
 *
 * @example
 * ```ts
 * encodeBase64url(new TextEncoder().encode('fo')) // 'Zm8'
 * ```
 */
export function encodeBase64url(bytes: Uint8Array): string {
  return encode(bytes, URL_ALPHABET, false)
}

/**
 * Decodes canonical unpadded base64url; `undefined` for anything else: a character outside the
 * alphabet, padding, a length no byte string encodes to (length mod 4 = 1), or non-zero unused
 * bits in the last character (a second spelling of the same bytes).
 *
 * @example
 * ```ts
 * decodeBase64url('Zm8') // Uint8Array of 'fo'
 * decodeBase64url('Zm8=') // undefined: base64url here is unpadded
 * ```
 */
export function decodeBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  return decode(text, URL_LOOKUP)
}

/**
 * Encodes bytes as standard base64 with padding (RFC 4648 §4).
 *
 * @example
 * ```ts
 * encodeBase64(new TextEncoder().encode('fo')) // 'Zm8='
 * ```
 */
export function encodeBase64(bytes: Uint8Array): string {
  return encode(bytes, STD_ALPHABET, true)
}

/**
 * Options of {@link decodeBase64}.
 *
 * @example
 * ```ts
 * const options: DecodeBase64Options = { loose: true }
 * ```
 */
export interface DecodeBase64Options {
  /**
   * Accept what RFC 9651 §4.2.7 asks Structured Field parsers not to fail on: missing or
   * partial `=` padding and non-zero pad bits (RFC 4648 §3.2 and §3.5 allow decoders to accept
   * them). The alphabet and the length (never one character past a quantum) are still checked.
   * Default false: canonical padded base64 only.
   */
  loose?: boolean
}

/**
 * Decodes canonical padded base64 (RFC 4648 §4); `undefined` for anything else (missing or
 * extra padding, whitespace, the base64url alphabet, non-zero pad bits). With `loose`, padding
 * and pad bits are not checked (see {@link DecodeBase64Options}).
 *
 * @example
 * ```ts
 * decodeBase64('Zm8=') // Uint8Array of 'fo'
 * decodeBase64('Zm8') // undefined: standard base64 is padded
 * decodeBase64('Zm8', { loose: true }) // Uint8Array of 'fo'
 * ```
 */
export function decodeBase64(
  text: string,
  options?: DecodeBase64Options,
): Uint8Array<ArrayBuffer> | undefined {
  const loose = options?.loose === true
  if (!loose && text.length % 4 !== 0) return undefined
  let end = text.length
  while (end > text.length - 2 && text.charCodeAt(end - 1) === 0x3d) end--
  // Exactly the padding that fills the last quantum (RFC 4648 §4: `=` or `==`, never more).
  if (!loose && (4 - (end % 4)) % 4 !== text.length - end) return undefined
  return decode(end === text.length ? text : text.slice(0, end), STD_LOOKUP, loose)
}
