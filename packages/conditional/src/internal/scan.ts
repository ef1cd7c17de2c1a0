/**
 * The allocation-free matcher `evaluatePreconditions` uses, on the entity-tag scanner of
 * `@api-blocks/core` (the one list syntax and size bounds every block shares): it compares
 * tags by index, so matching a list allocates nothing per member.
 *
 * @module
 */
import { scanEntityTagList } from '@api-blocks/core'

// RFC 9110 §8.8.3: etagc = %x21 / %x23-7E / obs-text (obs-text = %x80-FF).
export function isEtagc(code: number): boolean {
  return (code >= 0x23 && code <= 0x7e) || code === 0x21 || (code >= 0x80 && code <= 0xff)
}

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
  const opaqueLength = end - start
  // Strong comparison never matches a weak current tag (RFC 9110 §8.8.3.2).
  const comparable = source !== undefined && !(strong && weak)
  let found = false
  const scan = scanEntityTagList(value, (from, to, tagWeak) => {
    if (found || !comparable || to - from !== opaqueLength || (strong && tagWeak)) return
    found = regionEquals(value, from, source, start, opaqueLength)
  })
  if (scan === 'any') return 'any'
  if (typeof scan !== 'number') return 'invalid'
  return found ? 'match' : 'no-match'
}
