/**
 * What is signed, as bytes: the header values and the body's raw bytes joined by dots. The
 * body is never decoded as text, so bytes that are not UTF-8 are signed as they are.
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

const encoder = new TextEncoder()

/** The body as bytes: a string as its UTF-8, bytes as they are. */
export function bodyBytes(body: Uint8Array | string): Uint8Array {
  return typeof body === 'string' ? encoder.encode(body) : body
}

/** The bytes the HMAC is computed over, for `scheme`. */
export function signedContent(
  scheme: WebhookSignatureScheme,
  id: string,
  timestamp: string,
  body: Uint8Array,
): Uint8Array {
  // docs/spec.md §5 rule 14: the variant joins the timestamp and the raw body by a dot; the
  // standardised one (Standard Webhooks) puts the id first.
  const prefix = encoder.encode(scheme === 'standard' ? `${id}.${timestamp}.` : `${timestamp}.`)
  const content = new Uint8Array(prefix.byteLength + body.byteLength)
  content.set(prefix, 0)
  content.set(body, prefix.byteLength)
  return content
}
