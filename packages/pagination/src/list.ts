/**
 * The resource-interface list envelope of docs/spec.md §2.3 (`data`, `has_more`, `next_cursor`),
 * its request side (`limit`, `after`; §4.3) and the RFC 8288 `Link: <…>; rel="next"` header.
 *
 * `next_cursor` is `null` on the last page (docs/spec.md types it as a string and says nothing of
 * the end; null keeps the member present with one shape), and
 * `has_more === (next_cursor !== null)` always holds.
 *
 * @module
 */
import type { QueryCursorCodec } from './cursor.ts'
import { PaginationError } from './error.ts'
import type { PageRequest } from './keyset.ts'
import type { LimitOptions } from './limit.ts'
import { parseLimit } from './limit.ts'

/**
 * One page of a list, as docs/spec.md §2.3 shapes it.
 *
 * @example
 * ```ts
 * const body: ListEnvelope<Order> = await toListEnvelope(rows, page, cursors)
 * // { data: [...], has_more: true, next_cursor: 'v1.k1.eyJw…' }
 * ```
 */
export interface ListEnvelope<T> {
  /** The items of the page, in list order. */
  data: T[]
  /** True when more items follow; equals `next_cursor !== null`. */
  has_more: boolean
  /** The cursor to pass back as `after`, or `null` on the last page. */
  next_cursor: string | null
}

/**
 * Options of {@link parseListRequest}.
 *
 * @example
 * ```ts
 * const options: ListRequestOptions = { cursors, defaultLimit: 20, maxLimit: 100, afterParam: 'page_token' }
 * const page = await parseListRequest(url.searchParams, options)
 * ```
 */
export interface ListRequestOptions extends LimitOptions {
  /** The cursors of this list's query (order and filters). */
  readonly cursors: QueryCursorCodec
  /** Name of the page-size parameter; default `limit`. */
  readonly limitParam?: string
  /** Name of the cursor parameter; default `after`. */
  readonly afterParam?: string
}

/**
 * Reads `limit` and `after` from a query string into a forward {@link PageRequest}: `limit`
 * by {@link parseLimit}, `after` verified by the cursor codec.
 *
 * Rejects with a {@link PaginationError} (400) and nothing else for any input: a bad `limit`
 * or a repeated parameter is `bad-request`, a bad cursor `invalid-cursor`. An empty
 * `after=` is an invalid cursor, not a first page: a client that lost its cursor must not
 * start over silently.
 *
 * @example
 * ```ts
 * const url = new URL(request.url)
 * const cursors = codec.forQuery({ order, filters: { status: url.searchParams.get('status') } })
 * const page = await parseListRequest(url.searchParams, { cursors, defaultLimit: 20, maxLimit: 100 })
 * ```
 */
export async function parseListRequest(
  searchParams: URLSearchParams,
  options: ListRequestOptions,
): Promise<PageRequest> {
  const { cursors, limitParam = 'limit', afterParam = 'after' } = options
  const limit = parseLimit(searchParams.getAll(limitParam), options)
  const after = searchParams.getAll(afterParam)
  if (after.length > 1) {
    throw new PaginationError(
      'PARAMETER_REPEATED',
      `The ${afterParam} parameter must be given at most once.`,
    )
  }
  const request = { order: cursors.query.order, direction: 'forward', limit } as const
  if (after[0] === undefined) return request
  return { ...request, after: await cursors.decode(after[0]) }
}

/**
 * Builds the docs/spec.md §2.3 envelope from the rows of a `limit + 1` fetch (as {@link seekArray}
 * or the SQL of {@link keysetSql} return them): the first `limit` rows are the page, and an
 * extra row means more follow, without a COUNT. `next_cursor` is the cursor of the last
 * item on the page.
 *
 * @example
 * ```ts
 * const rows = seekArray(store.list(), page) // up to page.limit + 1 rows
 * const body = await toListEnvelope(rows, page, cursors)
 * // { data: [...], has_more: true, next_cursor: 'v1.k1.eyJw…' }
 * ```
 */
export async function toListEnvelope<T extends object>(
  rows: readonly T[],
  request: PageRequest,
  cursors: QueryCursorCodec,
): Promise<ListEnvelope<T>> {
  if (
    request.direction !== 'forward' ||
    !Number.isSafeInteger(request.limit) ||
    request.limit < 1
  ) {
    throw new TypeError('A list envelope needs a forward page request with a limit of at least 1')
  }
  const data = rows.slice(0, request.limit)
  const last = data.at(-1)
  const hasMore = rows.length > request.limit && last !== undefined
  // has_more and next_cursor are derived from one test, so they cannot disagree.
  return {
    data,
    has_more: hasMore,
    next_cursor: hasMore ? await cursors.cursorOf(last) : null,
  }
}

/**
 * Options of {@link nextPageLink}.
 *
 * @example
 * ```ts
 * nextPageLink(url, body.next_cursor, { param: 'page_token' } satisfies NextPageLinkOptions)
 * ```
 */
export interface NextPageLinkOptions {
  /** The cursor parameter; default `after`. */
  readonly param?: string
}

/**
 * The `Link` header value for the next page (RFC 8288 §3, relation `next` from the IANA Link
 * Relations registry): the request URL with the cursor parameter set to `nextCursor`, every
 * other query parameter kept byte for byte and in order. `null` on the last page.
 *
 * @example
 * ```ts
 * nextPageLink('https://api.example.com/v1/orders?status=open&limit=2', 'v1.k1.abc.def')
 * // '<https://api.example.com/v1/orders?status=open&limit=2&after=v1.k1.abc.def>; rel="next"'
 * ```
 */
export function nextPageLink(
  url: string | URL,
  nextCursor: string | null,
  options: NextPageLinkOptions = {},
): string | null {
  if (nextCursor === null) return null
  const { param = 'after' } = options
  const target = new URL(url)
  const kept = target.search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '' && formDecode(pair.split('=', 1)[0]!) !== param)
  kept.push(`${encodeURIComponent(param)}=${encodeURIComponent(nextCursor)}`)
  target.search = `?${kept.join('&')}`
  target.hash = ''
  // The WHATWG URL serialiser percent-encodes `<`, `>` and spaces in the query, so the
  // result is a valid URI-Reference between the angle brackets of RFC 8288 §3.
  return `<${target.href}>; rel="next"`
}

// application/x-www-form-urlencoded name decoding, as URLSearchParams does, without throwing
// on a stray `%`.
function formDecode(text: string): string {
  const spaced = text.replaceAll('+', ' ')
  try {
    return decodeURIComponent(spaced)
  } catch {
    return spaced
  }
}
