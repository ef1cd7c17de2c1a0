/**
 * What is signed: the header values and the body joined by dots. A body given as bytes is never
 * decoded as text, so bytes that are not UTF-8 are signed as they are; a body given as a string
 * is signed as its UTF-8.
 *
 * @module
 */

/**
 * Which content the HMAC covers.
 * - `'standard'`: Standard Webhooks, `${id}.${timestamp}.${body}`.
 * - `'timestamp-body'`: `${timestamp}.${body}` (docs/spec.md §5 rule 14).
 *
 * @example
 * ```ts
 * const scheme: WebhookSignatureScheme = 'timestamp-body'
 * ```
 */
export type WebhookSignatureScheme = 'standard' | 'timestamp-body'

/** The text before the body: `id.timestamp.` or `timestamp.` (docs/spec.md §5 rule 14). */
function prefixOf(scheme: WebhookSignatureScheme, id: string, timestamp: string): string {
  // docs/spec.md §5 rule 14: the variant joins the timestamp and the raw body by a dot; the
  // standardised one (Standard Webhooks) puts the id first.
  return scheme === 'standard' ? `${id}.${timestamp}.` : `${timestamp}.`
}

/**
 * The content the HMAC is computed over, for `scheme`: a string body stays a string (the HMAC
 * hashes its UTF-8), bytes are joined to the prefix's bytes and never decoded.
 *
 * A string body is not encoded here and then copied behind the prefix: `npm run bench --
 * webhook-signature` (docs/benchmarks.md, issue 15) measured `TextEncoder.encode` plus the join
 * at about 60 µs of a 64 KiB sign that took 100 µs, where hashing the joined string costs what
 * hashing the bytes does. The UTF-8 is the same as TextEncoder's (a lone surrogate becomes
 * U+FFFD in both), and it is what `fetch` sends for a string body.
 */
export function signedContent(
  scheme: WebhookSignatureScheme,
  id: string,
  timestamp: string,
  body: Uint8Array | string,
): Uint8Array | string {
  const prefix = prefixOf(scheme, id, timestamp)
  if (typeof body === 'string') return prefix + body
  // The id is visible ASCII (checkId) and the timestamp digits: one byte per character, so the
  // prefix is written straight into the joined array (one allocation, the body copied once).
  const content = new Uint8Array(prefix.length + body.byteLength)
  for (let index = 0; index < prefix.length; index += 1) content[index] = prefix.charCodeAt(index)
  content.set(body, prefix.length)
  return content
}
