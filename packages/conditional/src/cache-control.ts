/**
 * Cache-Control presets for API responses (RFC 9111 §5.2.2). Merging Cache-Control with
 * what other blocks set is the job of `@api-blocks/http`; these are the values to start from.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9111#section-5.2.2
 * @module
 */

/**
 * The Cache-Control values of {@link cacheControlPresets}.
 *
 * @example
 * ```ts
 * const presets: CacheControlPresets = cacheControlPresets
 * headers.set('cache-control', presets.perUserRevalidate)
 * ```
 */
export interface CacheControlPresets {
  /**
   * `private, no-store`: per-user data. `no-store` (RFC 9111 §5.2.2.5) keeps every cache
   * from storing it; `private` (§5.2.2.7) is redundant but says the intent to readers and
   * to caches that ignore `no-store`. No revalidation happens, so no ETag is needed.
   */
  readonly perUser: 'private, no-store'
  /**
   * `private, no-cache`: per-user data that the user's own cache may keep, but must revalidate
   * (with the ETag) before every reuse (§5.2.2.4, §5.2.2.7). Shared caches never store it.
   */
  readonly perUserRevalidate: 'private, no-cache'
  /**
   * `no-cache`: shared data any cache may store but must revalidate before every reuse
   * (§5.2.2.4). Send it with an ETag, so revalidation is a cheap 304.
   */
  readonly shared: 'no-cache'
}

/**
 * Cache-Control presets: `perUser` (`private, no-store`, what docs/spec.md asks for per-user data),
 * `perUserRevalidate` (`private, no-cache`) and `shared` (`no-cache`, with an ETag).
 *
 * @example
 * ```ts
 * headers.set('cache-control', cacheControlPresets.shared)
 * headers.set('etag', etagFromVersion(order.version))
 * ```
 */
export const cacheControlPresets: CacheControlPresets = Object.freeze({
  perUser: 'private, no-store',
  perUserRevalidate: 'private, no-cache',
  shared: 'no-cache',
})
