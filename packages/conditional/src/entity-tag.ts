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

import { locateEntityTag, scanEntityTagList } from '@api-blocks/core'
import { isEtagc, regionEquals } from './internal/scan.ts'

// The bounds live in core, with the scanner every block shares; they stay exported here.
export { MAX_CONDITIONAL_HEADER_LENGTH, MAX_ENTITY_TAGS } from '@api-blocks/core'

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
const INVALID = {
  syntax: Object.freeze({ kind: 'invalid', reason: 'syntax' }),
  'too-long': Object.freeze({ kind: 'invalid', reason: 'too-long' }),
  'too-many': Object.freeze({ kind: 'invalid', reason: 'too-many' }),
} as const satisfies Record<string, EntityTagList>

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
  if (typeof value !== 'string') return INVALID.syntax
  const tags: EntityTag[] = []
  // RFC 9110 §13.1.1, §13.1.2: "*" / #entity-tag, list syntax of §5.6.1 (empty elements are
  // skipped), within the bounds of @api-blocks/core.
  const result = scanEntityTagList(value, (start, end, weak) => {
    tags.push({ weak, opaque: value.slice(start, end) })
  })
  if (result === 'any') return ANY
  if (typeof result !== 'number') return INVALID[result]
  return { kind: 'tags', tags }
}
