/**
 * The entity-tag scanner shared by the public parsers and by `evaluatePreconditions`: it
 * validates RFC 9110 §8.8.3 syntax and locates tags by index, so matching a list allocates
 * nothing per member.
 *
 * @module
 */

/**
 * The longest If-Match, If-None-Match or If-Range value that is evaluated, in characters
 * (8 KiB). A longer list parses as `{ kind: 'invalid', reason: 'too-long' }` and matches
 * nothing.
 *
 * @example
 * ```ts
 * parseEntityTagList(`"${'a'.repeat(MAX_CONDITIONAL_HEADER_LENGTH)}"`) // { kind: 'invalid', reason: 'too-long' }
 * ```
 */
export const MAX_CONDITIONAL_HEADER_LENGTH = 8192

/**
 * The most entity tags an If-Match or If-None-Match list may hold. A list with more parses as
 * `{ kind: 'invalid', reason: 'too-many' }` and matches nothing.
 *
 * @example
 * ```ts
 * parseEntityTagList(Array.from({ length: MAX_ENTITY_TAGS + 1 }, (_, i) => `"${i}"`).join(', '))
 * // { kind: 'invalid', reason: 'too-many' }
 * ```
 */
export const MAX_ENTITY_TAGS = 64

const DQUOTE = 0x22
export const COMMA = 0x2c
const SP = 0x20
const HTAB = 0x09

// RFC 9110 §8.8.3: etagc = %x21 / %x23-7E / obs-text (obs-text = %x80-FF).
export function isEtagc(code: number): boolean {
  return (code >= 0x23 && code <= 0x7e) || code === 0x21 || (code >= 0x80 && code <= 0xff)
}

export function isOws(code: number): boolean {
  return code === SP || code === HTAB
}

/**
 * Scans one entity-tag starting at `start`. Returns the index just past the closing quote, or
 * -1 when the text there is not an entity-tag. `out[0]`/`out[1]` receive the opaque bounds and
 * `out[2]` 1 when weak. Shared by the list parser and the allocation-free matcher.
 *
 * @internal
 */
export function scanEntityTag(value: string, start: number, out: Int32Array): number {
  let i = start
  let weak = 0
  // RFC 9110 §8.8.3: weak = %s"W/" — case-sensitive, so "w/" is not a weak indicator.
  if (value.charCodeAt(i) === 0x57 && value.charCodeAt(i + 1) === 0x2f) {
    weak = 1
    i += 2
  }
  if (value.charCodeAt(i) !== DQUOTE) return -1
  const opaqueStart = ++i
  const length = value.length
  while (i < length) {
    const code = value.charCodeAt(i)
    if (code === DQUOTE) {
      out[0] = opaqueStart
      out[1] = i
      out[2] = weak
      return i + 1
    }
    if (!isEtagc(code)) return -1
    i++
  }
  return -1
}

const scratch = new Int32Array(3)

/** Whether `n` characters of `a` from `aStart` equal those of `b` from `bStart`. */
export function regionEquals(
  a: string,
  aStart: number,
  b: string,
  bStart: number,
  n: number,
): boolean {
  for (let k = 0; k < n; k++) {
    if (a.charCodeAt(aStart + k) !== b.charCodeAt(bStart + k)) return false
  }
  return true
}

/** What {@link matchList} found. */
export type ListMatch = 'any' | 'match' | 'no-match' | 'invalid'

/**
 * Locates the entity tag in a validator string (`"v7"`, `W/"v7"`, with optional surrounding
 * whitespace) without allocating: on success `out[0]`/`out[1]` are the opaque bounds and
 * `out[2]` is 1 when weak. Returns `false` when the string is not one entity tag.
 *
 * @internal
 */
export function locateEntityTag(value: string, out: Int32Array): boolean {
  if (value.length > MAX_CONDITIONAL_HEADER_LENGTH) return false
  let start = 0
  let end = value.length
  while (start < end && isOws(value.charCodeAt(start))) start++
  while (end > start && isOws(value.charCodeAt(end - 1))) end--
  return scanEntityTag(value, start, out) === end && end > start
}

/**
 * Matches an If-Match or If-None-Match value against the current tag, given as the region
 * `[start, end)` of `source` (no substring is made; `source` undefined means the resource has
 * no tag): the same answer as `parseEntityTagList` followed by a comparison, with no
 * allocation per member. The whole value is always scanned, so a malformed member after a
 * matching one still makes the value `invalid`.
 *
 * @internal
 */
export function matchList(
  value: string,
  source: string | undefined,
  start: number,
  end: number,
  weak: boolean,
  strong: boolean,
): ListMatch {
  const length = value.length
  if (length > MAX_CONDITIONAL_HEADER_LENGTH) return 'invalid'
  let i = 0
  while (i < length && isOws(value.charCodeAt(i))) i++
  if (value.charCodeAt(i) === 0x2a) {
    let j = i + 1
    while (j < length && isOws(value.charCodeAt(j))) j++
    return j === length ? 'any' : 'invalid'
  }
  const opaqueLength = end - start
  // Strong comparison never matches a weak current tag (RFC 9110 §8.8.3.2).
  let matched = source === undefined || (strong && weak)
  let found = false
  let count = 0
  while (i < length) {
    const code = value.charCodeAt(i)
    if (code === COMMA || code === SP || code === HTAB) {
      i++
      continue
    }
    const next = scanEntityTag(value, i, scratch)
    if (next === -1) return 'invalid'
    if (++count > MAX_ENTITY_TAGS) return 'invalid'
    if (!matched) {
      const from = scratch[0]!
      if (scratch[1]! - from === opaqueLength && !(strong && scratch[2] === 1)) {
        if (regionEquals(value, from, source!, start, opaqueLength)) matched = found = true
      }
    }
    i = next
    while (i < length && isOws(value.charCodeAt(i))) i++
    if (i < length && value.charCodeAt(i) !== COMMA) return 'invalid'
  }
  return found ? 'match' : 'no-match'
}
