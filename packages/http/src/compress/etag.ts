/**
 * Entity tags of content-coded representations. RFC 9110 §8.8.3.3: the gzip form and the
 * identity form of one resource are two representations, and a strong tag names exact bytes
 * (§8.8.1), so each coding gets its own strong tag: the identity tag `"7"` becomes `"7%-gzip"`
 * on the gzip form, `"7%-br"` on the brotli form. `compress()` writes these on the way out and
 * maps them back to the identity tag on the way in, so handlers only ever see their own tags.
 *
 * Why `%-`: `etagFromVersion()` of `@api-blocks/conditional` percent-encodes every `%` it is
 * given (`%` is always followed by two hex digits in its tags) and `etagFromBody()` is
 * base64url, so no tag either makes contains `%-`; and splitting at the last `%-` recovers
 * the identity tag and the coding of any coded tag (a coding name never contains `%`), so two
 * versions or two codings never share a tag. A strong tag that ends in `%-` and a coding name
 * (lower-case letters, digits, `_ . + -`) is read as a coded tag on the way in, so a handler
 * that makes its own tags should keep `%-` out of them.
 *
 * Weak tags stay as they are on every coding: a weak tag claims semantic equivalence only
 * (§8.8.1), which the coded forms have.
 *
 * @module
 */

/**
 * What separates an identity tag's opaque part from the coding in the tag of a coded form:
 * `"7"` + gzip gives `"7%-gzip"`.
 *
 * @example
 * ```ts
 * codedEtag('"7"', 'gzip') === `"7${CODED_ETAG_SEPARATOR}gzip"` // true
 * ```
 */
export const CODED_ETAG_SEPARATOR = '%-'

import { locateEntityTag, scanEntityTagList } from '@api-blocks/core'

const bounds = new Int32Array(3)

/**
 * The ETag of the `coding` form of a representation whose identity ETag is `etag`: a strong
 * tag gets the coding appended (`"7"` → `"7%-gzip"`, see {@link CODED_ETAG_SEPARATOR}); a
 * weak tag is returned as it is (it only claims equivalence, which the coded form has); a
 * value that is not an entity tag gives `undefined` (drop it rather than pass it on as if it
 * were one).
 *
 * @example
 * ```ts
 * codedEtag('"7"', 'gzip') // '"7%-gzip"'
 * codedEtag('W/"7"', 'br') // 'W/"7"'
 * codedEtag('7', 'gzip') // undefined: not an entity tag
 * ```
 */
export function codedEtag(etag: string, coding: string): string | undefined {
  // RFC 9110 §8.8.3: entity-tag = [ weak ] opaque-tag, located by core's scanner.
  if (!locateEntityTag(etag, bounds)) return undefined
  const opaque = etag.slice(bounds[0], bounds[1])
  return bounds[2] === 1 ? `W/"${opaque}"` : `"${opaque}${CODED_ETAG_SEPARATOR}${coding}"`
}

/**
 * @internal The opaque part of a strong tag, or `undefined` for a weak or malformed one.
 *
 * @example
 * ```ts
 * strongOpaque('"7"') // '7'
 * strongOpaque('W/"7"') // undefined
 * ```
 */
export function strongOpaque(etag: string): string | undefined {
  if (!locateEntityTag(etag, bounds) || bounds[2] === 1) return undefined
  return etag.slice(bounds[0], bounds[1])
}

/**
 * @internal What {@link toIdentityTags} made of a list.
 *
 * @example
 * ```ts
 * const tags: IdentityTags = { value: '"7", "8"', bases: ['7'] }
 * ```
 */
export interface IdentityTags {
  /** The list with coded tags replaced by their identity tag (and unwanted tags dropped). */
  readonly value: string
  /** The opaque parts of the identity tags that replaced a coded tag. */
  readonly bases: readonly string[]
}

// A content coding's name as codedEtag() writes it (RFC 9110 §8.4.1: a token, here in lower
// case and without "%"). Any such name counts, not only the codings this server offers: an
// instance behind the same load balancer may offer others (the node:zlib build has zstd and
// br), and a client may send their tags here.
const CODING = /^[a-z0-9][a-z0-9_.+-]*$/

/**
 * @internal Rewrites an If-Match or If-None-Match value for the handler: each strong tag of a
 * coded form (`"7%-gzip"`) whose coding `keep` accepts becomes its identity tag (`"7"`); one
 * whose coding it refuses is dropped; every other tag (weak, or of no coding) stays, unless
 * `others` is false, when it is dropped too. Answers `undefined` when nothing changes, for `*`,
 * and for a value that is not a valid list within core's bounds (`@api-blocks/conditional`
 * then treats it as invalid, as it would have). The list is read with core's
 * `scanEntityTagList`, the scanner conditional evaluates it with.
 *
 * @example
 * ```ts
 * toIdentityTags('"7%-gzip", W/"6"', () => true) // { value: '"7", W/"6"', bases: ['7'] }
 * toIdentityTags('"7%-br", "7"', (coding) => coding === 'gzip') // { value: '"7"', bases: [] }
 * toIdentityTags('"7%-gzip", "7"', () => true, false) // { value: '"7"', bases: ['7'] }
 * toIdentityTags('"7"', () => true) // undefined: nothing to rewrite
 * ```
 */
export function toIdentityTags(
  value: string,
  keep: (coding: string) => boolean,
  others = true,
): IdentityTags | undefined {
  if (others && !value.includes(CODED_ETAG_SEPARATOR)) return undefined
  const members: string[] = []
  const bases: string[] = []
  let changed = false
  const scan = scanEntityTagList(value, (start, end, weak) => {
    const opaque = value.slice(start, end)
    const split = weak ? -1 : opaque.lastIndexOf(CODED_ETAG_SEPARATOR)
    const coding = split < 0 ? '' : opaque.slice(split + CODED_ETAG_SEPARATOR.length)
    if (split >= 0 && CODING.test(coding)) {
      changed = true
      if (keep(coding)) {
        const base = opaque.slice(0, split)
        bases.push(base)
        members.push(`"${base}"`)
      }
    } else if (others) {
      members.push(`${weak ? 'W/' : ''}"${opaque}"`)
    } else {
      changed = true
    }
  })
  return typeof scan === 'number' && changed ? { value: members.join(', '), bases } : undefined
}

/**
 * @internal Whether an If-None-Match value matches the ETag a response is sent with, by the
 * weak comparison of RFC 9110 §13.1.2 (§8.8.3.2: the opaque parts are equal, weak or not):
 * `*` matches any representation; an invalid list, or a response without a valid tag, nothing
 * else.
 *
 * @example
 * ```ts
 * ifNoneMatchMatches('"6", W/"7"', '"7"') // true
 * ifNoneMatchMatches('"7"', '"7%-gzip"') // false: another representation
 * ```
 */
export function ifNoneMatchMatches(value: string, etag: string | null): boolean {
  const current =
    etag !== null && locateEntityTag(etag, bounds) ? etag.slice(bounds[0], bounds[1]) : undefined
  let found = false
  const scan = scanEntityTagList(value, (start, end) => {
    if (!found && current !== undefined && end - start === current.length) {
      found = value.startsWith(current, start)
    }
  })
  return scan === 'any' || (typeof scan === 'number' && found)
}
