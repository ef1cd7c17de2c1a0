/**
 * Entity tags (RFC 9110 §8.8.3): parse and format one tag, parse the comma lists of If-Match
 * and If-None-Match, and the strong and weak comparison functions of §8.8.3.2.
 *
 * Parsers never throw: a value that does not follow the grammar gives `undefined` (one tag) or
 * `{ kind: 'invalid' }` (a list). Formatters throw a `TypeError` for a tag that cannot be
 * written, since that is a programming error, not network input.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.3
 * @module
 */

import {
  COMMA,
  isEtagc,
  isOws,
  locateEntityTag,
  MAX_CONDITIONAL_HEADER_LENGTH,
  MAX_ENTITY_TAGS,
  regionEquals,
  scanEntityTag,
} from './internal/scan.ts'

export { MAX_CONDITIONAL_HEADER_LENGTH, MAX_ENTITY_TAGS } from './internal/scan.ts'

/**
 * One entity tag. `opaque` is the text between the double quotes; `weak` is whether the tag
 * carried the `W/` prefix.
 *
 * @example
 * ```ts
 * const tag: EntityTag = { weak: false, opaque: 'v7' }
 * formatEntityTag(tag) // '"v7"'
 * ```
 */
export interface EntityTag {
  readonly weak: boolean
  readonly opaque: string
}

/**
 * An If-Match or If-None-Match field value, parsed (RFC 9110 §13.1.1, §13.1.2):
 * `*`, a list of tags (possibly empty), or a value that cannot be evaluated.
 *
 * @example
 * ```ts
 * const list: EntityTagList = parseEntityTagList(request.headers.get('if-match') ?? '')
 * if (list.kind === 'tags') console.log(list.tags.map((tag) => tag.opaque))
 * ```
 */
export type EntityTagList =
  | { readonly kind: 'any' }
  | { readonly kind: 'tags'; readonly tags: readonly EntityTag[] }
  | { readonly kind: 'invalid'; readonly reason: 'syntax' | 'too-long' | 'too-many' }

const scratch = new Int32Array(3)

/**
 * Parses one entity tag (`"xyzzy"` or `W/"xyzzy"`), as found in ETag or If-Range. Leading and
 * trailing whitespace is ignored. Anything else gives `undefined`; it never throws.
 *
 * @example
 * ```ts
 * parseEntityTag('W/"v7"') // { weak: true, opaque: 'v7' }
 * parseEntityTag('v7')     // undefined: the quotes are part of the syntax
 * ```
 */
export function parseEntityTag(value: string): EntityTag | undefined {
  if (typeof value !== 'string' || !locateEntityTag(value, scratch)) return undefined
  return { weak: scratch[2] === 1, opaque: value.slice(scratch[0], scratch[1]) }
}

/**
 * Writes an entity tag in its wire form. Throws a `TypeError` when `opaque` holds a character
 * the grammar does not allow (a double quote, a space, a control character, or anything above
 * U+00FF); use {@link etagFromVersion} to make a tag from arbitrary text.
 *
 * @example
 * ```ts
 * formatEntityTag({ weak: false, opaque: 'v7' }) // '"v7"'
 * formatEntityTag({ weak: true, opaque: 'v7' })  // 'W/"v7"'
 * ```
 */
export function formatEntityTag(tag: EntityTag): string {
  const { opaque } = tag
  for (let i = 0; i < opaque.length; i++) {
    if (!isEtagc(opaque.charCodeAt(i))) {
      throw new TypeError(
        `Entity tag ${JSON.stringify(opaque)} has a character RFC 9110 §8.8.3 does not allow at index ${i}`,
      )
    }
  }
  return tag.weak ? `W/"${opaque}"` : `"${opaque}"`
}

const left = new Int32Array(3)
const right = new Int32Array(3)

// Compares without allocating: strings are located in place, never sliced.
function compare(a: EntityTag | string, b: EntityTag | string, strong: boolean): boolean {
  if (a === b && typeof a === 'string') {
    // The same wire form: one scan says whether it is a tag, and whether it is weak.
    return locateEntityTag(a, left) && !(strong && left[2] === 1)
  }
  let aStart = 0
  let aEnd: number
  let aWeak: boolean
  let aSource: string
  if (typeof a === 'string') {
    if (!locateEntityTag(a, left)) return false
    aSource = a
    aStart = left[0]!
    aEnd = left[1]!
    aWeak = left[2] === 1
  } else {
    aSource = a.opaque
    aEnd = aSource.length
    aWeak = a.weak
  }
  let bStart = 0
  let bEnd: number
  let bWeak: boolean
  let bSource: string
  if (typeof b === 'string') {
    if (!locateEntityTag(b, right)) return false
    bSource = b
    bStart = right[0]!
    bEnd = right[1]!
    bWeak = right[2] === 1
  } else {
    bSource = b.opaque
    bEnd = bSource.length
    bWeak = b.weak
  }
  if (strong && (aWeak || bWeak)) return false
  const n = aEnd - aStart
  return n === bEnd - bStart && regionEquals(aSource, aStart, bSource, bStart, n)
}

/**
 * The strong comparison of RFC 9110 §8.8.3.2: both tags are strong and their opaque parts are
 * identical. If-Match and If-Range use it. A string that is not an entity tag matches nothing.
 *
 * @example
 * ```ts
 * strongCompare('"1"', '"1"')     // true
 * strongCompare('W/"1"', 'W/"1"') // false
 * ```
 */
export function strongCompare(a: EntityTag | string, b: EntityTag | string): boolean {
  return compare(a, b, true)
}

/**
 * The weak comparison of RFC 9110 §8.8.3.2: the opaque parts are identical, whether or not
 * either tag is weak. If-None-Match uses it. A string that is not an entity tag matches nothing.
 *
 * @example
 * ```ts
 * weakCompare('W/"1"', '"1"') // true
 * weakCompare('W/"1"', 'W/"2"') // false
 * ```
 */
export function weakCompare(a: EntityTag | string, b: EntityTag | string): boolean {
  return compare(a, b, false)
}

const ANY: EntityTagList = Object.freeze({ kind: 'any' })
const invalid = (reason: 'syntax' | 'too-long' | 'too-many'): EntityTagList =>
  Object.freeze({ kind: 'invalid', reason })
const INVALID_SYNTAX = invalid('syntax')
const INVALID_TOO_LONG = invalid('too-long')
const INVALID_TOO_MANY = invalid('too-many')

/**
 * Walks a list value: `If-Match = "*" / #entity-tag` (RFC 9110 §13.1.1, §13.1.2, list syntax
 * of §5.6.1). Calls `visit(opaqueStart, opaqueEnd, weak)` for each tag and returns the count,
 * -1 for `*`, or an invalid marker. Empty list elements are allowed and skipped (§5.6.1:
 * "a recipient MUST parse and ignore a reasonable number of empty list elements").
 */
function walkList(
  value: string,
  visit: (start: number, end: number, weak: boolean) => void,
): number | EntityTagList {
  const length = value.length
  if (length > MAX_CONDITIONAL_HEADER_LENGTH) return INVALID_TOO_LONG
  let i = 0
  while (i < length && isOws(value.charCodeAt(i))) i++
  if (value.charCodeAt(i) === 0x2a) {
    let j = i + 1
    while (j < length && isOws(value.charCodeAt(j))) j++
    // "*" stands alone: "*, \"a\"" is neither "*" nor a list of entity tags.
    return j === length ? -1 : INVALID_SYNTAX
  }
  let count = 0
  while (i < length) {
    const code = value.charCodeAt(i)
    if (code === COMMA || isOws(code)) {
      i++
      continue
    }
    const next = scanEntityTag(value, i, scratch)
    if (next === -1) return INVALID_SYNTAX
    if (++count > MAX_ENTITY_TAGS) return INVALID_TOO_MANY
    visit(scratch[0]!, scratch[1]!, scratch[2] === 1)
    i = next
    while (i < length && isOws(value.charCodeAt(i))) i++
    if (i < length && value.charCodeAt(i) !== COMMA) return INVALID_SYNTAX
  }
  return count
}

/**
 * Parses an If-Match or If-None-Match value: `*`, a comma-separated list of entity tags (with
 * optional whitespace and empty elements), or invalid. Never throws.
 *
 * A value is `invalid` when any member is not an entity tag (unquoted tags included), when
 * `*` is mixed with tags, when it is longer than {@link MAX_CONDITIONAL_HEADER_LENGTH} or when
 * it holds more than {@link MAX_ENTITY_TAGS} tags. An invalid list matches nothing (see
 * `evaluatePreconditions` for what that means for each field).
 *
 * @example
 * ```ts
 * parseEntityTagList('"a", W/"b"') // { kind: 'tags', tags: [{ weak: false, opaque: 'a' }, { weak: true, opaque: 'b' }] }
 * parseEntityTagList('*')          // { kind: 'any' }
 * parseEntityTagList('a, b')       // { kind: 'invalid', reason: 'syntax' }
 * ```
 */
export function parseEntityTagList(value: string): EntityTagList {
  if (typeof value !== 'string') return INVALID_SYNTAX
  const tags: EntityTag[] = []
  const result = walkList(value, (start, end, weak) => {
    tags.push({ weak, opaque: value.slice(start, end) })
  })
  if (typeof result !== 'number') return result
  if (result === -1) return ANY
  return { kind: 'tags', tags }
}
