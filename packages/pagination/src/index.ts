/**
 * Cursor pagination for HTTP APIs, on Web standards (any runtime): signed opaque cursors
 * (HMAC-SHA-256, rotatable keys, bound to the query), the docs/spec.md §2.3 list envelope with a
 * checked `limit` and an RFC 8288 `Link` header, Relay connections (docs/spec.md §2.2), and keyset
 * seeks over SQL or an in-memory array that share one cursor.
 *
 * @example
 * ```ts
 * import { createCursorCodec, parseListRequest, seekArray, toListEnvelope } from '@api-blocks/pagination'
 *
 * const codec = createCursorCodec({ keys: [{ id: 'k1', secret: process.env.CURSOR_SECRET! }] })
 * const cursors = codec.forQuery({ order: { keys: ['created_at', 'id'], direction: 'desc' } })
 * const page = await parseListRequest(new URL(request.url).searchParams, { cursors, defaultLimit: 20, maxLimit: 100 })
 * const body = await toListEnvelope(seekArray(orders, page), page, cursors)
 * ```
 *
 * @module
 */

export type {
  CursorCodec,
  CursorCodecOptions,
  CursorKey,
  CursorQuery,
  FilterValue,
  QueryCursorCodec,
} from './cursor.ts'
export { CURSOR_VERSION, createCursorCodec, MAX_CURSOR_LENGTH, MIN_SECRET_BYTES } from './cursor.ts'
export type { PaginationErrorCode } from './error.ts'
export { PaginationError } from './error.ts'
export type {
  CursorPosition,
  CursorValue,
  KeysetOrder,
  PageRequest,
  SortDirection,
} from './keyset.ts'
export { comparePositions, MAX_KEYS, positionOf, seekArray } from './keyset.ts'
export type { LimitOptions } from './limit.ts'
export { parseLimit } from './limit.ts'
export type { ListEnvelope, ListRequestOptions, NextPageLinkOptions } from './list.ts'
export { nextPageLink, parseListRequest, toListEnvelope } from './list.ts'
export type {
  Connection,
  ConnectionArgs,
  ConnectionArgsOptions,
  Edge,
  PageInfo,
} from './relay.ts'
export { parseConnectionArgs, toConnection } from './relay.ts'
export type { KeysetSql, KeysetSqlOptions, PlaceholderStyle } from './sql.ts'
export { keysetSql, quoteIdentifier } from './sql.ts'
