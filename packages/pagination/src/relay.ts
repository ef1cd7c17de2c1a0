/**
 * Relay connections (docs/spec.md §2.2) over keyset cursors, following the GraphQL Cursor
 * Connections Specification: `first`/`after` pages forward, `last`/`before` backward.
 *
 * How the spec's algorithms map onto a keyset seek:
 * - ApplyCursorsToEdges: `after` and `before` are exclusive bounds in the order. The spec
 *   removes the edges up to the after-edge "if afterEdge exists"; here the cursor is a
 *   position, so it bounds the page even when its row has been deleted since (the spec would
 *   start over from the first edge, which repeats rows). Likewise an `after` at or past
 *   `before` gives no edges, where the spec, looking for the before-edge only among the edges
 *   left after `after`, would ignore `before`.
 * - EdgesToReturn: `first` keeps the first edges, `last` the last ones; one extra row is
 *   fetched from that end to learn whether more exist.
 * - `first` and `last` together, which the spec "strongly discourages", are refused with a
 *   400 `bad-request` (code `FIRST_AND_LAST`), as GitHub's GraphQL API does.
 * - Neither given: `first` is `defaultLimit`. Above `maxLimit`: coerced to `maxLimit`
 *   (AIP-158). `first: 0` or `last: 0` is served: no edges.
 * - HasPreviousPage is true only for `last` with more edges before the page; HasNextPage
 *   only for `first` with more edges after it. The spec lets a server also answer true for
 *   `after` (or `before`) when it "can efficiently determine" that rows exist beyond the
 *   cursor; this implementation does not, on any backend, so the answer never depends on
 *   where the rows are stored.
 *
 * @see https://relay.dev/graphql/connections.htm
 * @module
 */
import type { QueryCursorCodec } from './cursor.ts'
import { PaginationError } from './error.ts'
import type { CursorValue, PageRequest } from './keyset.ts'
import type { LimitOptions } from './limit.ts'
import { assertLimitOptions } from './limit.ts'

/**
 * The connection arguments of the spec ("Forward/Backward pagination arguments").
 *
 * @example
 * ```ts
 * const args: ConnectionArgs = { first: 10, after: null } // as GraphQL hands them over
 * ```
 */
export interface ConnectionArgs {
  readonly first?: number | null
  readonly after?: string | null
  readonly last?: number | null
  readonly before?: string | null
}

/**
 * An edge: a node and the cursor of its position (spec "Edge Types").
 *
 * @example
 * ```ts
 * const edge: Edge<Order> = connection.edges[0]!
 * console.log(edge.node.id, edge.cursor)
 * ```
 */
export interface Edge<T> {
  node: T
  cursor: string
}

/**
 * The PageInfo type of the spec ("PageInfo").
 *
 * @example
 * ```ts
 * const { hasNextPage, endCursor }: PageInfo = connection.pageInfo
 * ```
 */
export interface PageInfo {
  hasPreviousPage: boolean
  hasNextPage: boolean
  /** The cursor of the first edge, or `null` when there are no edges. */
  startCursor: string | null
  /** The cursor of the last edge, or `null` when there are no edges. */
  endCursor: string | null
}

/**
 * A connection (spec "Connection Types"): the edges of one page and its PageInfo.
 *
 * @example
 * ```ts
 * const connection: Connection<Order> = await toConnection(rows, page, cursors)
 * ```
 */
export interface Connection<T> {
  edges: Edge<T>[]
  pageInfo: PageInfo
}

/**
 * Options of {@link parseConnectionArgs}.
 *
 * @example
 * ```ts
 * const options: ConnectionArgsOptions = { cursors, defaultLimit: 20, maxLimit: 100 }
 * const page = await parseConnectionArgs(args, options)
 * ```
 */
export interface ConnectionArgsOptions extends LimitOptions {
  /** The cursors of this connection's query (order and filters). */
  readonly cursors: QueryCursorCodec
}

function count(name: 'first' | 'last', value: number, maxLimit: number): number {
  // Spec, Pagination algorithm, EdgesToReturn steps 2.a and 3.a: "If first/last is less than
  // 0: Throw an error."
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new PaginationError(
      'ARGUMENT_INVALID',
      `The ${name} argument must be a whole number of at least 0.`,
    )
  }
  return Math.min(value, maxLimit)
}

/**
 * Checks Relay connection arguments and decodes their cursors into a {@link PageRequest}.
 * See the module documentation for every rule.
 *
 * Rejects with a {@link PaginationError} (400) and nothing else for any input: negative or
 * fractional `first`/`last` and `first` with `last` are `bad-request`, a bad cursor is
 * `invalid-cursor`.
 *
 * @example
 * ```ts
 * const cursors = codec.forQuery({ order: { keys: ['created_at', 'id'], direction: 'desc' } })
 * const page = await parseConnectionArgs({ last: 10, before: cursor }, { cursors, defaultLimit: 20, maxLimit: 100 })
 * // { direction: 'backward', limit: 10, before: [...], order }
 * ```
 */
export async function parseConnectionArgs(
  args: ConnectionArgs,
  options: ConnectionArgsOptions,
): Promise<PageRequest> {
  assertLimitOptions(options)
  const { cursors, maxLimit } = options
  const { first, last, after, before } = args
  const hasFirst = first !== undefined && first !== null
  const hasLast = last !== undefined && last !== null
  if (hasFirst && hasLast) {
    throw new PaginationError('FIRST_AND_LAST', 'Give either first or last, not both.')
  }
  const limit = hasLast
    ? count('last', last, maxLimit)
    : hasFirst
      ? count('first', first, maxLimit)
      : options.defaultLimit
  const bounds: { after?: CursorValue[]; before?: CursorValue[] } = {}
  if (after !== undefined && after !== null) bounds.after = await cursors.decode(after)
  if (before !== undefined && before !== null) bounds.before = await cursors.decode(before)
  return {
    order: cursors.query.order,
    direction: hasLast ? 'backward' : 'forward',
    limit,
    ...bounds,
  }
}

/**
 * Builds a connection from the rows of a `limit + 1` fetch in fetch order (as
 * {@link seekArray} or the SQL of {@link keysetSql} return them; reversed for `last`). The
 * edges come out in list order, each with the cursor of its node.
 *
 * @example
 * ```ts
 * const page = await parseConnectionArgs(args, { cursors, defaultLimit: 20, maxLimit: 100 })
 * const connection = await toConnection(seekArray(store.list(), page), page, cursors)
 * // { edges: [{ node, cursor }, …], pageInfo: { hasNextPage, hasPreviousPage, startCursor, endCursor } }
 * ```
 */
export async function toConnection<T extends object>(
  rows: readonly T[],
  request: PageRequest,
  cursors: QueryCursorCodec,
): Promise<Connection<T>> {
  const { limit } = request
  const backward = request.direction === 'backward'
  // EdgesToReturn: the extra row, if any, lies beyond `limit` from the end taken.
  const more = rows.length > limit
  const page = rows.slice(0, limit)
  if (backward) page.reverse()
  const edges = await Promise.all(
    page.map(async (node) => ({ node, cursor: await cursors.cursorOf(node) })),
  )
  return {
    edges,
    pageInfo: {
      // HasPreviousPage step 1: last is set and the edges exceed it. Step 2 (after) not used.
      hasPreviousPage: backward && more,
      // HasNextPage step 1: first is set and the edges exceed it. Step 2 (before) not used.
      hasNextPage: !backward && more,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  }
}
