/**
 * Keyset ("seek") pagination over an in-memory array: the same seek and sort that
 * {@link keysetSql} expresses in SQL, so one cursor pages a database table and an array alike.
 *
 * A page is found by where it starts, not by an offset: order by a unique tuple
 * `(sort_key, id)` and keep the rows after the last one seen, `(sort_key, id) > (last_key,
 * last_id)`. Inserts and deletes between requests never make a page skip or repeat a row
 * (a row whose sort key is updated does move, as it should).
 *
 * @see https://use-the-index-luke.com/no-offset
 * @see https://google.aip.dev/158
 * @module
 */

/**
 * One value of a keyset position. Dates become ISO 8601 strings (see {@link positionOf}).
 *
 * @example
 * ```ts
 * const value: CursorValue = new Date().toISOString()
 * ```
 */
export type CursorValue = string | number | boolean

/**
 * A position in a keyset order: one value per key of the order, in order.
 *
 * @example
 * ```ts
 * const position: CursorPosition = ['2026-06-01T10:00:00.000Z', 'ord_000042']
 * await cursors.encode(position)
 * ```
 */
export type CursorPosition = readonly CursorValue[]

/**
 * `asc` or `desc`: one direction for the whole key tuple.
 *
 * @example
 * ```ts
 * const direction: SortDirection = url.searchParams.get('sort') === 'oldest' ? 'asc' : 'desc'
 * ```
 */
export type SortDirection = 'asc' | 'desc'

/**
 * The order of a list: the item fields compared in turn, and one direction for all of them.
 * The last key must be unique (an id), so that the order is total and a position names
 * exactly one place between two rows.
 *
 * One direction for the whole tuple is what lets SQL seek with one row-value comparison on
 * one index range; mixed directions are not supported.
 *
 * @example
 * ```ts
 * const newestFirst: KeysetOrder = { keys: ['created_at', 'id'], direction: 'desc' }
 * ```
 */
export interface KeysetOrder {
  /** Field names, most significant first, ending with a unique one. 1 to {@link MAX_KEYS}. */
  readonly keys: readonly string[]
  readonly direction: SortDirection
}

/**
 * What one page asks for, after parsing and cursor decoding: the bounds (exclusive positions
 * in the order), the page size and the end it is taken from.
 *
 * `forward` takes the first `limit` rows after `after` (and before `before`); `backward`
 * takes the last `limit` rows before `before` (Relay `last`). Fetch `limit + 1` rows to learn
 * whether more follow.
 *
 * @example
 * ```ts
 * const page: PageRequest = await parseListRequest(url.searchParams, { cursors, defaultLimit: 20, maxLimit: 100 })
 * const rows = seekArray(orders, page) // up to page.limit + 1 rows
 * ```
 */
export interface PageRequest {
  readonly order: KeysetOrder
  readonly direction: 'forward' | 'backward'
  /** Rows wanted on the page; the seek fetches one more. */
  readonly limit: number
  /** Exclusive lower bound in the order. */
  readonly after?: CursorPosition
  /** Exclusive upper bound in the order. */
  readonly before?: CursorPosition
}

/**
 * The most keys an order may have.
 *
 * @example
 * ```ts
 * const order: KeysetOrder = { keys: ['tenant', 'created_at', 'id'], direction: 'asc' } // at most MAX_KEYS
 * ```
 */
export const MAX_KEYS = 8

/** @internal Throws a TypeError for an order that cannot work: a server bug, never input. */
export function assertOrder(order: KeysetOrder): void {
  const { keys, direction } = order
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS) {
    throw new TypeError(`A keyset order needs 1 to ${MAX_KEYS} keys`)
  }
  if (new Set(keys).size !== keys.length || keys.some((key) => typeof key !== 'string' || !key)) {
    throw new TypeError('Keyset order keys must be distinct non-empty strings')
  }
  if (direction !== 'asc' && direction !== 'desc') {
    throw new TypeError(`Keyset order direction must be "asc" or "desc", got ${String(direction)}`)
  }
}

/** @internal Whether `value` may be part of a position: a string, finite number or boolean. */
export function isCursorValue(value: unknown): value is CursorValue {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  )
}

/**
 * The position of an item in an order: its values for the order's keys. A `Date` becomes its
 * ISO 8601 string (`toISOString()`, millisecond precision), which sorts as the time does;
 * `-0` becomes `0`.
 *
 * Throws a TypeError when a key is missing or holds another type (a server bug: sort keys
 * must be non-null scalars).
 *
 * @example
 * ```ts
 * positionOf({ id: 'ord_7', created_at: '2026-01-02T03:04:05.000Z' }, { keys: ['created_at', 'id'], direction: 'desc' })
 * // ['2026-01-02T03:04:05.000Z', 'ord_7']
 * ```
 */
export function positionOf(item: object, order: KeysetOrder): CursorValue[] {
  return order.keys.map((key) => {
    let value: unknown = (item as Record<string, unknown>)[key]
    if (value instanceof Date) value = value.toISOString()
    if (!isCursorValue(value)) {
      throw new TypeError(
        `Sort key "${key}" must be a string, a finite number, a boolean or a Date; got ${value === null ? 'null' : typeof value}`,
      )
    }
    return value === 0 ? 0 : value
  })
}

const RANK = { boolean: 0, number: 1, string: 2 } as const

function compareValues(a: CursorValue, b: CursorValue): number {
  if (typeof a !== typeof b) {
    return RANK[typeof a as keyof typeof RANK] - RANK[typeof b as keyof typeof RANK]
  }
  // Strings compare by UTF-16 code unit, as `<` does (PostgreSQL: COLLATE "C" on BMP text).
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Compares two positions value by value, ascending: negative, zero or positive. Numbers compare
 * numerically, strings by UTF-16 code unit, `false < true`; the sort direction is not applied.
 *
 * @example
 * ```ts
 * comparePositions(['2026-01-01', 'b'], ['2026-01-01', 'a']) // 1
 * ```
 */
export function comparePositions(a: CursorPosition, b: CursorPosition): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const order = compareValues(a[i]!, b[i]!)
    if (order !== 0) return order
  }
  return a.length - b.length
}

/**
 * The rows a keyset query returns, from an array: keep the items strictly between the
 * request's bounds, sort them in the order (reversed for a `backward` request) and take
 * `limit + 1`. Exactly what the SQL of {@link keysetSql} returns on the same rows, in the
 * same fetch order, ready for {@link toListEnvelope} or {@link toConnection}.
 *
 * Filter the array first; `items` is not modified.
 *
 * @example
 * ```ts
 * const page = await parseListRequest(url.searchParams, { cursors, defaultLimit: 20, maxLimit: 100 })
 * const rows = seekArray(store.list(), page)
 * const body = await toListEnvelope(rows, page, cursors)
 * ```
 */
export function seekArray<T extends object>(items: readonly T[], request: PageRequest): T[] {
  const { order, after, before } = request
  assertOrder(order)
  const sign = (order.direction === 'asc' ? 1 : -1) * (request.direction === 'backward' ? -1 : 1)
  const ascending = order.direction === 'asc' ? 1 : -1
  const kept: { item: T; position: CursorPosition }[] = []
  for (const item of items) {
    const position = positionOf(item, order)
    // The bounds are positions in the order: "after" means later in the order, whichever
    // direction the order runs.
    if (after !== undefined && ascending * comparePositions(position, after) <= 0) continue
    if (before !== undefined && ascending * comparePositions(position, before) >= 0) continue
    kept.push({ item, position })
  }
  kept.sort((a, b) => sign * comparePositions(a.position, b.position))
  return kept.slice(0, request.limit + 1).map((entry) => entry.item)
}
