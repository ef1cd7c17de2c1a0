/**
 * The keyset seek in SQL: a parameterised row-value comparison, the ORDER BY that goes with
 * it and the `limit + 1` to fetch. Values are only ever parameters; identifiers are checked
 * and double-quoted (SQL:2016 delimited identifiers), so neither can inject SQL.
 *
 * Row values (`(a, b) > ($1, $2)`) are understood by PostgreSQL, MySQL 8, MariaDB and SQLite
 * 3.15+, and with an index on `(a, b)` PostgreSQL answers them with one index range scan.
 * The sort keys must be NOT NULL columns: a comparison with NULL is never true, so rows with
 * NULL keys would be skipped.
 *
 * @see https://use-the-index-luke.com/sql/partial-results/fetch-next-page
 * @module
 */
import type { CursorPosition, CursorValue, PageRequest } from './keyset.ts'
import { assertOrder } from './keyset.ts'

/**
 * Placeholder style: `$1, $2` (PostgreSQL) or `?` (MySQL, SQLite).
 *
 * @example
 * ```ts
 * const style: PlaceholderStyle = 'question' // MySQL, SQLite
 * keysetSql(page, { placeholder: style }).where // e.g. '("created_at", "id") < (?, ?)'
 * ```
 */
export type PlaceholderStyle = 'dollar' | 'question'

/**
 * Options of {@link keysetSql}.
 *
 * @example
 * ```ts
 * const options: KeysetSqlOptions = { firstParam: 2, columns: { created_at: 'o.created_at' } }
 * const seek = keysetSql(page, options)
 * ```
 */
export interface KeysetSqlOptions {
  /**
   * The column of each order key, when it is not the key itself: `{ created_at:
   * 'o.created_at' }`. A column is an identifier or `table.column`; each part is 1 to 63
   * characters of letters, digits, `_` and `$`, not starting with a digit or `$`.
   */
  readonly columns?: Readonly<Record<string, string>>
  /** Default `dollar`. */
  readonly placeholder?: PlaceholderStyle
  /**
   * The number of the first `$n` placeholder, for a query that already has parameters;
   * default 1. Ignored with `?` placeholders.
   */
  readonly firstParam?: number
}

/**
 * The SQL pieces of one page.
 *
 * @example
 * ```ts
 * const seek: KeysetSql = keysetSql(page)
 * await db.query(`SELECT * FROM orders WHERE ${seek.where} ORDER BY ${seek.orderBy} LIMIT ${seek.limit}`, seek.params)
 * ```
 */
export interface KeysetSql {
  /**
   * The seek predicate, e.g. `("created_at", "id") < ($1, $2)`; `TRUE` on the first page.
   * AND it with the query's own filters.
   */
  readonly where: string
  /** The values of the placeholders in `where`, in order. */
  readonly params: CursorValue[]
  /** The ORDER BY list without the keywords, e.g. `"created_at" DESC, "id" DESC`. */
  readonly orderBy: string
  /** The LIMIT to fetch: the page size plus one, to learn whether more rows follow. */
  readonly limit: number
}

const IDENTIFIER_PART = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/

/**
 * Checks an identifier (`column` or `table.column`) and double-quotes each part. Throws a
 * TypeError for anything else: identifiers come from server code, never from a request.
 *
 * @example
 * ```ts
 * quoteIdentifier('o.created_at') // '"o"."created_at"'
 * quoteIdentifier('id; DROP TABLE x') // throws TypeError
 * ```
 */
export function quoteIdentifier(identifier: string): string {
  const parts = typeof identifier === 'string' ? identifier.split('.') : []
  if (
    parts.length === 0 ||
    parts.length > 2 ||
    !parts.every((part) => IDENTIFIER_PART.test(part))
  ) {
    throw new TypeError(`Not a safe SQL identifier: ${JSON.stringify(identifier)}`)
  }
  return parts.map((part) => `"${part}"`).join('.')
}

/**
 * The SQL of a keyset page: `WHERE <filters> AND <where> ORDER BY <orderBy> LIMIT <limit>`.
 * Feed the rows it returns, in order, to {@link toListEnvelope} or {@link toConnection};
 * {@link seekArray} returns the same rows from an array, so one cursor serves both.
 *
 * `after` seeks past its position in the order, `before` stops short of it; a `backward`
 * request (Relay `last`) reverses the ORDER BY so the LIMIT keeps the rows nearest `before`.
 *
 * @example
 * ```ts
 * const seek = keysetSql(page, { firstParam: 2 })
 * const { rows } = await db.query(
 *   `SELECT * FROM orders WHERE status = $1 AND ${seek.where} ORDER BY ${seek.orderBy} LIMIT ${seek.limit}`,
 *   ['open', ...seek.params],
 * )
 * // page.after = ['2026-06-01T10:00:00.000Z', 'ord_000042'], order desc:
 * // seek.where   === '("created_at", "id") < ($2, $3)'
 * // seek.orderBy === '"created_at" DESC, "id" DESC'
 * ```
 */
export function keysetSql(request: PageRequest, options: KeysetSqlOptions = {}): KeysetSql {
  const { order, limit } = request
  assertOrder(order)
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new TypeError('The page request limit must be a whole number of at least 0')
  }
  const { columns = {}, placeholder = 'dollar', firstParam = 1 } = options
  if (!Number.isSafeInteger(firstParam) || firstParam < 1) {
    throw new TypeError('firstParam must be a whole number of at least 1')
  }
  const quoted = order.keys.map((key) => quoteIdentifier(columns[key] ?? key))
  const params: CursorValue[] = []
  const bound = (position: CursorPosition, op: '<' | '>'): string => {
    if (position.length !== quoted.length) {
      throw new TypeError(`A position needs ${quoted.length} values, got ${position.length}`)
    }
    const marks = position.map((value) => {
      params.push(value)
      return placeholder === 'question' ? '?' : `$${firstParam + params.length - 1}`
    })
    if (quoted.length === 1) return `${quoted[0]} ${op} ${marks[0]}`
    return `(${quoted.join(', ')}) ${op} (${marks.join(', ')})`
  }
  // "After" is later in the order: greater when ascending, smaller when descending.
  const later = order.direction === 'asc' ? '>' : '<'
  const earlier = order.direction === 'asc' ? '<' : '>'
  const predicates: string[] = []
  if (request.after !== undefined) predicates.push(bound(request.after, later))
  if (request.before !== undefined) predicates.push(bound(request.before, earlier))
  // A backward page reads from the end: the reverse order, reversed again by toConnection.
  const ascending = (order.direction === 'asc') !== (request.direction === 'backward')
  const keyword = ascending ? 'ASC' : 'DESC'
  return {
    where: predicates.length === 0 ? 'TRUE' : predicates.join(' AND '),
    params,
    orderBy: quoted.map((column) => `${column} ${keyword}`).join(', '),
    limit: limit + 1,
  }
}
