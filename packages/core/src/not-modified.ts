/**
 * The one 304 Not Modified builder, shared by the conditional-request block and `compress()`.
 *
 * @module
 */
import type { HeadersInitLike } from './handler.ts'

// Fields that describe the content (RFC 9110 §8 representation metadata and §6.4 content
// framing) and so have no place on a 304, which has none. Content-Location stays: §15.4.5
// requires it.
const CONTENT_FIELDS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-range',
  'content-disposition',
  'content-digest',
  'repr-digest',
  'transfer-encoding',
  'trailer',
]

/**
 * A 304 Not Modified built from the header fields the 200 would have carried. RFC 9110
 * §15.4.5: it MUST carry Content-Location, Date, ETag and Vary, plus Cache-Control and
 * Expires, when the 200 would have; it SHOULD NOT carry other representation metadata, so
 * content fields are dropped, and so is Last-Modified when there is an ETag (Last-Modified is
 * kept only to guide cache updates when there is no tag). Fields that are not about the
 * representation (X-Request-Id, CORS, RateLimit…) are kept. There is never a body.
 *
 * @example
 * ```ts
 * return notModifiedResponse({ etag: '"7"', 'cache-control': 'no-cache', vary: 'Accept', 'content-type': 'application/json' })
 * // 304 with ETag, Cache-Control and Vary; no Content-Type
 * ```
 */
export function notModifiedResponse(headers?: HeadersInitLike): Response {
  const kept = new Headers(headers)
  for (const name of CONTENT_FIELDS) kept.delete(name)
  if (kept.has('etag')) kept.delete('last-modified')
  return new Response(null, { status: 304, headers: kept })
}
