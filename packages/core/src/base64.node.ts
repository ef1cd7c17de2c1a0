/**
 * The base64 and base64url of `base64.ts` on Node's `Buffer`: the build the `node` export
 * condition selects for the package root (see `index.node.ts`). Same API and the same strict
 * rules; Buffer's encoder is native, about 13 times faster for 300 bytes and 45 times for
 * 64 KiB than the portable one (stored responses are base64 in Redis: every write and replay).
 * Buffer's decoder is lenient (it skips characters outside the alphabet and ignores padding),
 * so strictness is checked by re-encoding: a text is canonical exactly when it is the
 * encoding of what it decodes to, since every byte string has one canonical encoding.
 *
 * @module
 */
import { Buffer } from 'node:buffer'
import type { DecodeBase64Options } from './base64.ts'

// Buffers of a few KiB may be views into Node's shared pool: hand out arrays of their own.
function own(buffer: Buffer): Uint8Array<ArrayBuffer> {
  return new Uint8Array(buffer)
}

function view(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** {@inheritDoc encodeBase64url} */
export function encodeBase64url(bytes: Uint8Array): string {
  return view(bytes).toString('base64url')
}

/** {@inheritDoc decodeBase64url} */
export function decodeBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  const decoded = Buffer.from(text, 'base64url')
  return decoded.toString('base64url') === text ? own(decoded) : undefined
}

/** {@inheritDoc encodeBase64} */
export function encodeBase64(bytes: Uint8Array): string {
  return view(bytes).toString('base64')
}

const LOOSE = /^[A-Za-z0-9+/]*={0,2}$/

/** {@inheritDoc decodeBase64} */
export function decodeBase64(
  text: string,
  options?: DecodeBase64Options,
): Uint8Array<ArrayBuffer> | undefined {
  if (options?.loose === true) {
    if (!LOOSE.test(text)) return undefined
    let end = text.length
    while (end > 0 && text.charCodeAt(end - 1) === 0x3d) end--
    return end % 4 === 1 ? undefined : own(Buffer.from(text, 'base64'))
  }
  const decoded = Buffer.from(text, 'base64')
  return decoded.toString('base64') === text ? own(decoded) : undefined
}
