/**
 * Byte helpers shared by the fingerprint, the store key and the stored-response codec: hex and
 * base64url text (RFC 4648 §5 and §8), and length-prefixed framing so that hashed parts can
 * never run into each other.
 *
 * @module
 */

const encoder = new TextEncoder()

/** The UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text)
}

/** Lowercase hexadecimal (RFC 4648 §8). */
export function toHex(bytes: Uint8Array): string {
  let out = ''
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0')
  return out
}

/** base64url without padding (RFC 4648 §5). */
export function toBase64url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

interface BufferLike {
  toString(encoding: 'base64'): string
}
interface BufferClass {
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): BufferLike
  from(text: string, encoding: 'base64' | 'utf8'): Uint8Array
  byteLength(text: string): number
}

// Node's Buffer (also in Bun), reached through globalThis rather than imported so the package
// stays Web-standard: its base64 runs natively, about 25 times faster than btoa over
// String.fromCharCode for a few hundred bytes (the stored-response codec runs on every Redis
// and PostgreSQL write and replay). Elsewhere the portable code below runs.
const NativeBuffer = (globalThis as { Buffer?: BufferClass }).Buffer

/**
 * The UTF-8 bytes of `text`, as {@link utf8}, but where Node's Buffer exists they are a view
 * into its pool (a fraction of the cost of a buffer of their own): only for bytes that are
 * copied at once and never handed on (see `wholeBody`).
 */
export function utf8Shared(text: string): Uint8Array {
  return NativeBuffer === undefined ? encoder.encode(text) : NativeBuffer.from(text, 'utf8')
}

/** Standard base64 with padding (RFC 4648 §4). */
export function toBase64(bytes: Uint8Array): string {
  if (NativeBuffer !== undefined) {
    return NativeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
  }
  let binary = ''
  // In slices: String.fromCharCode with a huge argument list overflows the stack.
  for (let at = 0; at < bytes.length; at += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000))
  }
  return btoa(binary)
}

/** Decodes standard base64 (RFC 4648 §4); throws a `TypeError` on anything else. */
export function fromBase64(text: string): Uint8Array {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) {
    throw new TypeError('Not canonical base64')
  }
  // Canonical base64 (checked above) decodes the same everywhere; Buffer does it natively.
  if (NativeBuffer !== undefined) return new Uint8Array(NativeBuffer.from(text, 'base64'))
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index)
  return bytes
}

/**
 * The UTF-8 length of `text` in bytes, without encoding it: what `TextEncoder` (and node:crypto
 * hashing a string) writes, a lone surrogate counting as the 3 bytes of U+FFFD.
 */
export function utf8Length(text: string): number {
  // Node's count is native (and counts a lone surrogate as 3 bytes too).
  return NativeBuffer === undefined ? utf8LengthPortable(text) : NativeBuffer.byteLength(text)
}

/** {@link utf8Length} in plain JavaScript, for runtimes without Node's Buffer. */
export function utf8LengthPortable(text: string): number {
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
 * concatenates them, so `("ab", "c")` and `("a", "bc")` give different inputs to a hash.
 */
export function frame(parts: readonly (string | Uint8Array)[]): Uint8Array {
  if (allText(parts)) return utf8(framedText(parts))
  const chunks: Uint8Array[] = []
  let length = 0
  for (const part of parts) {
    const bytes = typeof part === 'string' ? utf8(part) : part
    const prefix = utf8(`${bytes.byteLength}:`)
    chunks.push(prefix, bytes)
    length += prefix.byteLength + bytes.byteLength
  }
  return concat(chunks, length)
}

function allText(parts: readonly (string | Uint8Array)[]): parts is readonly string[] {
  return parts.every((part) => typeof part === 'string')
}

/** The frame of text parts as text: each `<UTF-8 byte length>:<text>`. */
function framedText(parts: readonly string[]): string {
  let text = ''
  for (const part of parts) text += `${utf8Length(part)}:${part}`
  return text
}

/** The chunks as one array of `length` bytes (a single chunk is returned as it is). */
export function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0]
  const out = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}

interface NodeHash {
  update(data: string | Uint8Array): NodeHash
  digest(): Uint8Array
  digest(encoding: 'base64url'): string
}
interface NodeCrypto {
  createHash(algorithm: 'sha256'): NodeHash
  /** One-shot hashing (Node >= 21.7): no Hash object, about half the cost for short input. */
  hash?(algorithm: 'sha256', data: string, outputEncoding: 'base64url'): string
}

// Node fast path: crypto.subtle.digest hops to the thread pool and back (about 25 µs a call on
// Node 24), node:crypto's createHash answers in place (about 1 µs for these few hundred bytes).
// Reached through process.getBuiltinModule (Node >= 22.3, also Bun and Deno), not a static
// import, so the package stays Web-standard: elsewhere Web Crypto is used.
const nodeCrypto: NodeCrypto | undefined = (() => {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process
  try {
    const module = process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined
    return typeof module?.createHash === 'function' ? module : undefined
  } catch {
    return undefined
  }
})()

/** SHA-256 through Web Crypto (every runtime). */
export async function webSha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>))
}

/**
 * SHA-256 of `frame(parts)`. On node:crypto the text parts are hashed as strings (node encodes
 * them to UTF-8 itself), which saves a `TextEncoder` call per part: the same bytes, hashed
 * without building them.
 */
export function sha256Frame(parts: readonly (string | Uint8Array)[]): Promise<Uint8Array> {
  if (nodeCrypto === undefined) return webSha256(frame(parts))
  return Promise.resolve(new Uint8Array(nodeHashFrame(nodeCrypto, parts).digest()))
}

/**
 * SHA-256 of `frame(parts)` as base64url without padding: the text itself on node:crypto
 * (answered in place, no promise to await), a promise through Web Crypto.
 */
export function sha256FrameBase64url(
  parts: readonly (string | Uint8Array)[],
): string | Promise<string> {
  if (nodeCrypto === undefined) return webSha256(frame(parts)).then(toBase64url)
  if (nodeCrypto.hash !== undefined && allText(parts)) {
    return nodeCrypto.hash('sha256', framedText(parts), 'base64url')
  }
  return nodeHashFrame(nodeCrypto, parts).digest('base64url')
}

function nodeHashFrame(crypto: NodeCrypto, parts: readonly (string | Uint8Array)[]): NodeHash {
  const hash = crypto.createHash('sha256')
  let text = ''
  for (const part of parts) {
    if (typeof part === 'string') text += `${utf8Length(part)}:${part}`
    else {
      hash.update(`${text}${part.byteLength}:`)
      hash.update(part)
      text = ''
    }
  }
  if (text !== '') hash.update(text)
  return hash
}
