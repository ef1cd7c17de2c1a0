/**
 * The entity-tag grammar (RFC 9110 §8.8.3) and the list syntax of If-Match and If-None-Match
 * (§13.1.1, §13.1.2, §5.6.1), with their size bounds, scanned in one place for every block that
 * reads them: `@api-blocks/conditional` evaluates preconditions with it, and `compress()` of
 * `@api-blocks/http` maps the tags of compressed forms with it, so both see the same list, with
 * the same limits. Tags are located by index, so scanning allocates nothing per member.
 *
 * @module
 */

/**
 * The longest If-Match, If-None-Match or If-Range value that is evaluated, in characters
 * (8 KiB). A longer value is invalid and matches nothing.
 *
 * @example
 * ```ts
 * scanEntityTagList(`"${'a'.repeat(MAX_CONDITIONAL_HEADER_LENGTH)}"`, () => {}) // 'too-long'
 * ```
 */
export const MAX_CONDITIONAL_HEADER_LENGTH = 8192

/**
 * The most entity tags an If-Match or If-None-Match list may hold. A list with more is invalid
 * and matches nothing.
 *
 * @example
 * ```ts
 * const value = Array.from({ length: MAX_ENTITY_TAGS + 1 }, (_, i) => `"${i}"`).join(', ')
 * scanEntityTagList(value, () => {}) // 'too-many'
 * ```
 */
export const MAX_ENTITY_TAGS = 64

/**
 * What {@link scanEntityTagList} found: the number of tags in a valid list, `'any'` for `*`, or
 * why the value is invalid.
 *
 * @example
 * ```ts
 * const scan: EntityTagListScan = scanEntityTagList('"a", W/"b"', () => {}) // 2
 * ```
 */
export type EntityTagListScan = number | 'any' | 'syntax' | 'too-long' | 'too-many'

const DQUOTE = 0x22
const COMMA = 0x2c

// RFC 9110 §8.8.3: etagc = %x21 / %x23-7E / obs-text (obs-text = %x80-FF).
function isEtagc(code: number): boolean {
  return (code >= 0x23 && code <= 0x7e) || code === 0x21 || (code >= 0x80 && code <= 0xff)
}

// RFC 9110 §5.6.3: OWS = *( SP / HTAB )
function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09
}

// One entity-tag from `start`: the index just past its closing quote, or -1. `out[0]`/`out[1]`
// receive the bounds of the opaque part and `out[2]` 1 when the tag is weak.
function scanEntityTag(value: string, start: number, out: Int32Array): number {
  let i = start
  let weak = 0
  // RFC 9110 §8.8.3: weak = %s"W/", case-sensitive, so "w/" is not a weak indicator.
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

/**
 * Locates the one entity tag of a validator value (`"v7"`, `W/"v7"`, with optional whitespace
 * around it: an ETag or If-Range field) without allocating: on success `out[0]` and `out[1]`
 * are the bounds of the opaque part and `out[2]` is 1 when the tag is weak. `false` when the
 * value is not exactly one entity tag, or is longer than {@link MAX_CONDITIONAL_HEADER_LENGTH}.
 *
 * @example
 * ```ts
 * const out = new Int32Array(3)
 * if (locateEntityTag(' W/"v7" ', out)) console.log(out[2] === 1) // weak
 * ```
 */
export function locateEntityTag(value: string, out: Int32Array): boolean {
  if (value.length > MAX_CONDITIONAL_HEADER_LENGTH) return false
  let start = 0
  let end = value.length
  while (start < end && isOws(value.charCodeAt(start))) start++
  while (end > start && isOws(value.charCodeAt(end - 1))) end--
  return end > start && scanEntityTag(value, start, out) === end
}

const scratch = new Int32Array(3)

/**
 * Scans an If-Match or If-None-Match value, `"*" / #entity-tag`, and calls `visit` with the
 * bounds of each tag's opaque part (`value.slice(start, end)`) and whether it is weak, in
 * order. Empty list elements are skipped (RFC 9110 §5.6.1: a recipient MUST parse and ignore a
 * reasonable number of them). Answers the number of tags, `'any'` for `*` alone, or why the
 * value is invalid: a member that is not an entity tag, `*` mixed with tags (`'syntax'`), more
 * than {@link MAX_CONDITIONAL_HEADER_LENGTH} characters (`'too-long'`, checked before
 * anything is visited) or more than {@link MAX_ENTITY_TAGS} tags (`'too-many'`). An invalid
 * value may have had members visited before the fault was found. Never throws.
 *
 * @example
 * ```ts
 * const value = '"a", , W/"b"'
 * const opaque: string[] = []
 * scanEntityTagList(value, (start, end) => opaque.push(value.slice(start, end))) // 2, ['a', 'b']
 * scanEntityTagList('*', () => {}) // 'any'
 * scanEntityTagList('a, b', () => {}) // 'syntax'
 * ```
 */
export function scanEntityTagList(
  value: string,
  visit: (start: number, end: number, weak: boolean) => void,
): EntityTagListScan {
  const length = value.length
  if (length > MAX_CONDITIONAL_HEADER_LENGTH) return 'too-long'
  let i = 0
  while (i < length && isOws(value.charCodeAt(i))) i++
  if (value.charCodeAt(i) === 0x2a) {
    let j = i + 1
    while (j < length && isOws(value.charCodeAt(j))) j++
    // "*" stands alone: "*, \"a\"" is neither "*" nor a list of entity tags.
    return j === length ? 'any' : 'syntax'
  }
  let count = 0
  while (i < length) {
    const code = value.charCodeAt(i)
    if (code === COMMA || isOws(code)) {
      i++
      continue
    }
    const next = scanEntityTag(value, i, scratch)
    if (next === -1) return 'syntax'
    if (++count > MAX_ENTITY_TAGS) return 'too-many'
    visit(scratch[0]!, scratch[1]!, scratch[2] === 1)
    i = next
    while (i < length && isOws(value.charCodeAt(i))) i++
    if (i < length && value.charCodeAt(i) !== COMMA) return 'syntax'
  }
  return count
}
