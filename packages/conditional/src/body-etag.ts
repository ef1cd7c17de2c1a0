/**
 * The opt-in fallback: a Fetch middleware that tags 200 responses to GET and HEAD by hashing
 * their body, then answers If-None-Match / If-Modified-Since with 304. It runs after the
 * handler and buffers the body, so it saves bandwidth, not work; resources that have a version
 * should use `evaluatePreconditions()` before the handler instead.
 *
 * @module
 */
import type { Middleware } from '@api-blocks/core'
import { notModifiedResponse, readAhead } from '@api-blocks/core'
import { parseEntityTag } from './entity-tag.ts'
import { evaluatePreconditions } from './evaluate.ts'
import { parseHttpDate } from './http-date.ts'
import { toPreconditionResponse } from './response.ts'
import type { EtagOptions } from './validators.ts'
import { hashToEtag } from './validators.ts'

/**
 * The default of {@link BodyEtagOptions.maxBytes}: 1 MiB.
 *
 * @example
 * ```ts
 * bodyEtag({ maxBytes: DEFAULT_BODY_ETAG_MAX_BYTES / 4 })
 * ```
 */
export const DEFAULT_BODY_ETAG_MAX_BYTES = 1_048_576

/**
 * Options of {@link bodyEtag}.
 *
 * @example
 * ```ts
 * const options: BodyEtagOptions = { maxBytes: 256 * 1024, weak: true }
 * ```
 */
export interface BodyEtagOptions extends EtagOptions {
  /**
   * The largest body that is buffered and hashed, in bytes (default 1 MiB): a whole number,
   * at least 0 (anything else throws a `RangeError` when the middleware is made). A larger body
   * is streamed through as it is, without a tag.
   */
  maxBytes?: number
}

/**
 * A middleware (`Middleware` of `@api-blocks/core`) that gives 200 responses to GET and
 * HEAD a strong ETag from the SHA-256 of their complete body (see {@link etagFromBody}), then
 * evaluates the request's preconditions against it and answers 304 (or 412 for a failed
 * If-Match) instead.
 *
 * Skipped, so the response passes through untouched: other methods; any status but 200
 * (errors must not get a tag, honojs/hono#5191, and a 206 body is only a part); responses
 * without a body; `Cache-Control: no-store` (nothing will be revalidated);
 * `text/event-stream`; bodies over `maxBytes`. A response that already has an ETag is not
 * hashed, but its tag is still evaluated.
 *
 * @example
 * ```ts
 * const tagged = bodyEtag({ maxBytes: 256 * 1024 })
 * const handler = (request: Request) => tagged(request, async () => Response.json(report))
 * ```
 */
export function bodyEtag(options: BodyEtagOptions = {}): Middleware {
  const maxBytes = options.maxBytes ?? DEFAULT_BODY_ETAG_MAX_BYTES
  // Checked here, at start-up, rather than by the reader on the first request.
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError('bodyEtag: maxBytes must be a whole number of bytes, at least 0')
  }
  return async (request, next) => {
    const response = await next(request)
    const method = request.method
    if ((method !== 'GET' && method !== 'HEAD') || response.status !== 200) return response
    let tagged = response
    let etag = response.headers.get('etag')
    if (etag === null) {
      if (response.body === null) return response
      if (/(?:^|,)\s*no-store\s*(?:,|$)/i.test(response.headers.get('cache-control') ?? '')) {
        return response
      }
      const type = response.headers.get('content-type') ?? ''
      if (type.toLowerCase().startsWith('text/event-stream')) return response
      // Past maxBytes, readAhead hands back a stream of what it read and then the rest.
      const buffered = await readAhead(response.body, maxBytes)
      if (!buffered.complete) return new Response(buffered.stream, response)
      etag = await hashToEtag(buffered.bytes, options)
      // Chunks of a Response body are Uint8Arrays over ArrayBuffers (the Fetch standard).
      tagged = new Response(buffered.bytes as Uint8Array<ArrayBuffer>, response)
      tagged.headers.set('etag', etag)
    } else if (parseEntityTag(etag) === undefined) {
      // The handler's own tag is not an entity tag: nothing sound to compare against.
      return response
    }
    const lastModified = response.headers.get('last-modified')
    const result = evaluatePreconditions(method, request.headers, {
      etag,
      lastModified: lastModified === null ? undefined : parseHttpDate(lastModified),
    })
    if (result.outcome === 'not-modified') {
      await tagged.body?.cancel()
      return notModifiedResponse(tagged.headers)
    }
    if (result.outcome === 'precondition-failed' || result.outcome === 'precondition-required') {
      await tagged.body?.cancel()
      return toPreconditionResponse(result, { request })
    }
    return tagged
  }
}
