/**
 * The canonical text of a query's filters, hashed into every cursor, so that two equal queries
 * hash the same whatever the order their members were built in. Written by core's
 * `canonicalJson`; this module only maps what a filter may hold beyond JSON onto JSON first.
 *
 * The text is part of the cursor format: a change here would turn every cursor issued before
 * it into `CURSOR_QUERY_MISMATCH`. The tests pin exact hashes.
 *
 * @module
 */
import type { JsonValue } from '@api-blocks/core'
import { canonicalJson, MAX_CANONICAL_JSON_DEPTH } from '@api-blocks/core'

/**
 * A value a filter may hold: JSON, plus `undefined` for "not given".
 *
 * @example
 * ```ts
 * const filters: FilterValue = { status: url.searchParams.get('status'), tags: ['a', 'b'], q: undefined }
 * ```
 */
export type FilterValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | readonly FilterValue[]
  | { readonly [name: string]: FilterValue }

/**
 * The canonical JSON text of `filters`: members sorted by name (UTF-16 code units), array
 * order kept (`?status=a&status=b` and `?status=b&status=a` are different queries). Beyond
 * JSON, as `JSON.stringify` treats them (and as cursors have always been hashed): an
 * `undefined` member is left out, `undefined` alone or in an array is `null`, and a number
 * that is not finite is `null`.
 *
 * Throws a `TypeError` for a value that is not a {@link FilterValue} or that nests deeper than
 * core's `MAX_CANONICAL_JSON_DEPTH`: filters come from the server's own normalisation.
 */
export function canonicalFilters(filters: FilterValue): string {
  // Filters are usually JSON already: one pass of the writer. It has no text for `undefined`
  // or a non-finite number, which only then are mapped, in a copy.
  const text = canonicalJson(filters as JsonValue) ?? canonicalJson(toJson(filters, 0))
  if (text === undefined) {
    throw new TypeError(`Cursor filters nest deeper than ${MAX_CANONICAL_JSON_DEPTH} levels`)
  }
  return text
}

function toJson(value: FilterValue, depth: number): JsonValue {
  switch (typeof value) {
    case 'undefined':
      return null
    case 'number':
      return Number.isFinite(value) ? value : null
    case 'string':
    case 'boolean':
      return value
    case 'object':
      break
    default:
      throw new TypeError(`A cursor filter holds JSON values and undefined, not a ${typeof value}`)
  }
  // Too deep for the writer anyway: left as it is, so the writer answers undefined.
  if (value === null || depth >= MAX_CANONICAL_JSON_DEPTH) return value as JsonValue
  if (Array.isArray(value)) {
    const items = value as readonly FilterValue[]
    // Array.from visits holes too: a hole is undefined, so null.
    return Array.from(items, (item) => toJson(item, depth + 1))
  }
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) {
    // A Date, a Map, a class instance: hashed by its enumerable members, every Date would be `{}`.
    throw new TypeError('A cursor filter holds plain JSON objects, not instances of a class')
  }
  const record = value as { readonly [name: string]: FilterValue }
  const copy: Record<string, JsonValue> = {}
  for (const name of Object.keys(record)) {
    const member = record[name]
    if (member === undefined) continue
    // Defined, not assigned: a member named __proto__ must stay a member.
    Object.defineProperty(copy, name, {
      value: toJson(member, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return copy
}
