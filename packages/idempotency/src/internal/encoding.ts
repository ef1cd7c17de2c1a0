/**
 * Byte helpers of the fingerprint and the store key: lowercase hex (RFC 4648 §8), and
 * length-prefixed framing so that hashed parts can never run into each other. Everything else
 * (SHA-256, base64, the body reader) comes from `@api-blocks/core`.
 *
 * @module
 */

import { concatBytes } from '@api-blocks/core'
import type { CryptoInput } from '@api-blocks/core/crypto'

const encoder = new TextEncoder()

/** Lowercase hexadecimal (RFC 4648 §8). */
export function toHex(bytes: Uint8Array): string {
  let out = ''
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0')
  return out
}

/**
 * The UTF-8 length of `text` in bytes, without encoding it: what `TextEncoder` (and hashing a
 * string) writes, a lone surrogate counting as the 3 bytes of U+FFFD.
 */
export function utf8Length(text: string): number {
  let length = text.length
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0x80) continue
    if (code < 0x800) length += 1
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) {
      // A pair: two code units, four bytes.
      length += 2
      index++
    } else length += 2
  }
  return length
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}

/**
 * Frames each part as `<byte length>:<bytes>` (a netstring without the trailing comma) and
 * concatenates them, so `("ab", "c")` and `("a", "bc")` give different inputs to a hash. Text
 * parts alone are framed as text (hashing a string hashes its UTF-8: the same bytes, never
 * built); with a byte part the frame is bytes.
 */
export function frame(parts: readonly (string | Uint8Array)[]): CryptoInput {
  let text = ''
  const chunks: Uint8Array[] = []
  for (const part of parts) {
    if (typeof part === 'string') text += `${utf8Length(part)}:${part}`
    else {
      chunks.push(encoder.encode(`${text}${part.byteLength}:`), part)
      text = ''
    }
  }
  if (chunks.length === 0) return text
  if (text !== '') chunks.push(encoder.encode(text))
  return concatBytes(chunks)
}
