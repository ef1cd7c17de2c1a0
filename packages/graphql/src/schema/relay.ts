/**
 * Relay connections (GraphQL Cursor Connections Specification, docs/spec.md §2.2) resolved
 * with @api-blocks/pagination: the same signed keyset cursors as the REST list endpoints, so a
 * cursor taken from one interface is valid on the other for the same query. A bad cursor or
 * argument is a coded `BAD_USER_INPUT` error at the connection field, never an exception that
 * escapes as an internal error.
 *
 * @see https://relay.dev/graphql/connections.htm
 * @module
 */
import type {
  Connection,
  ConnectionArgs,
  ConnectionArgsOptions,
  PageRequest,
} from '@api-blocks/pagination'
import { PaginationError, parseConnectionArgs, toConnection } from '@api-blocks/pagination'
import type { GraphQLError } from 'graphql'
import { codedError } from '../error.ts'

/**
 * A {@link PaginationError} as the GraphQL error a client sees: `BAD_USER_INPUT` with
 * `extensions.reason` set to the pagination code (`CURSOR_SIGNATURE`, `CURSOR_EXPIRED`,
 * `FIRST_AND_LAST`, `ARGUMENT_INVALID`, …) and its message.
 *
 * @example
 * ```ts
 * try {
 *   await cursors.decode(after)
 * } catch (error) {
 *   if (error instanceof PaginationError) throw paginationError(error)
 *   throw error
 * }
 * ```
 */
export function paginationError(error: PaginationError): GraphQLError {
  return codedError('BAD_USER_INPUT', error.message, { reason: error.code })
}

/**
 * Resolves a Relay connection field: checks `first`/`after`/`last`/`before` and decodes the
 * cursors (`parseConnectionArgs`), asks `fetch` for the rows of that {@link PageRequest} (a
 * `limit + 1` keyset seek in page order, as `seekArray` or `keysetSql` give them), and builds
 * the edges and `pageInfo` (`toConnection`). A {@link PaginationError} from any step rejects
 * as {@link paginationError}; anything else `fetch` throws passes through unchanged.
 *
 * @example
 * ```ts
 * const cursors = codec.forQuery({ order: { keys: ['createdAt', 'id'], direction: 'desc' } })
 * const resolvers = {
 *   Query: {
 *     orders: (_: unknown, args: ConnectionArgs) =>
 *       resolveConnection(args, { cursors, defaultLimit: 20, maxLimit: 100 }, async (page) =>
 *         seekArray(await store.list(), page),
 *       ),
 *   },
 * }
 * ```
 */
export async function resolveConnection<T extends object>(
  args: ConnectionArgs,
  options: ConnectionArgsOptions,
  fetch: (page: PageRequest) => Promise<readonly T[]>,
): Promise<Connection<T>> {
  try {
    const page = await parseConnectionArgs(args, options)
    return await toConnection(await fetch(page), page, options.cursors)
  } catch (error) {
    if (error instanceof PaginationError) throw paginationError(error)
    throw error
  }
}

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/

/**
 * The SDL of the Relay `PageInfo` type (spec "PageInfo"; `startCursor` and `endCursor` are
 * null on an empty page). Include it once next to {@link connectionTypeDefs}.
 *
 * @example
 * ```ts
 * const typeDefs = `${pageInfoTypeDefs}${connectionTypeDefs('Order')}type Query { orders(first: Int, after: String): OrderConnection! }`
 * ```
 */
export const pageInfoTypeDefs: string = `type PageInfo {
  hasPreviousPage: Boolean!
  hasNextPage: Boolean!
  startCursor: String
  endCursor: String
}
`

/**
 * The SDL of `<Node>Connection` and `<Node>Edge` for a node type (spec "Connection Types",
 * "Edge Types"), shaped as {@link resolveConnection} answers. The connection's name ends in
 * `Connection`, so the guard pass sizes its `edges` by `first`/`last`.
 *
 * @example
 * ```ts
 * connectionTypeDefs('Order')
 * // type OrderConnection { edges: [OrderEdge!]! pageInfo: PageInfo! }
 * // type OrderEdge { cursor: String! node: Order! }
 * ```
 */
export function connectionTypeDefs(node: string): string {
  if (!NAME.test(node)) throw new TypeError(`connectionTypeDefs: ${node} is not a GraphQL name.`)
  return `type ${node}Connection {
  edges: [${node}Edge!]!
  pageInfo: PageInfo!
}
type ${node}Edge {
  cursor: String!
  node: ${node}!
}
`
}
