/**
 * Reads request header fields from either a Fetch `Headers` (or anything with `get`) or a plain
 * record with lower-case names, as Node's `IncomingHttpHeaders` is.
 *
 * @module
 */

/**
 * Request header fields: a Fetch `Headers`, anything with a `get(name)` method, or a record
 * keyed by lower-case field name (Node's `request.headers`). Repeated fields given as an array
 * are combined with `", "`, as RFC 9110 §5.3 allows for list-based fields.
 *
 * @example
 * ```ts
 * const fromFetch: HeaderSource = request.headers
 * const fromNode: HeaderSource = { 'if-none-match': ['"a"', '"b"'] } // IncomingHttpHeaders
 * ```
 */
export type HeaderSource =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>

/** A header record, as {@link HeaderSource} allows. */
export type HeaderRecord = Readonly<Record<string, string | readonly string[] | undefined>>

/** A header source with a `get` method, as {@link HeaderSource} allows. */
export interface HeaderGetter {
  get(name: string): string | null
}

/** Whether the source is read with `get` (worked out once per request, not once per field). */
export function isGetter(headers: HeaderSource): headers is HeaderGetter {
  return typeof (headers as { get?: unknown }).get === 'function'
}

/**
 * One field from a `get` source; `null` when absent or when `get` answers something that is
 * not a string.
 */
export function fromGetter(headers: HeaderGetter, name: string): string | null {
  const value: unknown = headers.get(name)
  return typeof value === 'string' ? value : null
}

/**
 * One field value read from a record (the caller reads the property with a literal name, so
 * the engine can cache the lookup); arrays are combined with ", ".
 */
export function fromRecord(value: unknown): string | null {
  if (typeof value === 'string') return value
  if (value === undefined) return null
  if (Array.isArray(value)) {
    return value.every((member) => typeof member === 'string') ? value.join(', ') : null
  }
  return null
}
