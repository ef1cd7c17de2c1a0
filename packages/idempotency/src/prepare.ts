/**
 * The request side of the middleware: what makes a keyed request ready to claim. In order:
 * the key (draft-ietf-httpapi-idempotency-key-header §2.1), the scope (see `scope.ts`), the
 * body (bounded by the smaller of `maxBodyBytes` and the route's limit, read once), the fingerprint (see `fingerprint.ts`) and the store key (see
 * `store-key.ts`). Nothing here touches the store: a request refused here was never claimed.
 *
 * @module
 */
import { BodyReadError, bodyLimitOf, clientNetwork, readRequestBody } from '@api-blocks/core'
import { IdempotencyError } from './error.ts'
import { fingerprintOf } from './fingerprint.ts'
import { parseIdempotencyKey } from './key.ts'
import type { ResolvedOptions } from './options.ts'
import { deriveStoreKey } from './store-key.ts'

/** @internal A keyed request, ready to claim. */
export interface PreparedRequest {
  /** The client's key, unquoted. */
  readonly key: string
  /**
   * Whose records these are, for the store's per-client bound: the scope, except that an
   * `ip:<address>` scope names the client's network (`clientNetwork`: an IPv6 /56), so one
   * subscriber cannot take a fresh bound with every address of its prefix. The store key keeps
   * the whole address: two hosts of one network never replay each other's responses.
   */
  readonly scope: string
  /** Scope and key, hashed: what the store knows the record by. */
  readonly storeKey: string
  readonly fingerprint: string
  /** The body bytes as read (empty for no body); the handler is handed these. */
  readonly body: Uint8Array
  /** What `JSON.parse` gave for the body while fingerprinting it; `undefined` when not JSON. */
  readonly json: unknown
}

const NO_HEADERS: readonly [] = []

/**
 * @internal Prepares a keyed request (`field` is its Idempotency-Key field, `null` when it has
 * none but the route requires one).
 *
 * @throws {IdempotencyError} `IDEMPOTENCY_KEY_MISSING`, `IDEMPOTENCY_KEY_INVALID`,
 *   `BODY_TOO_LARGE`, `BODY_UNREADABLE` (refusals: 4xx), or `IDEMPOTENCY_SCOPE_UNKNOWN` (500).
 *   Anything else a scope function or the body stream throws passes through as it is.
 */
export async function prepareRequest(
  config: ResolvedOptions,
  request: Request,
  field: string | null,
): Promise<PreparedRequest> {
  if (field === null) {
    // Draft §2.7: a missing key on an operation that requires one → 400.
    throw new IdempotencyError(
      'IDEMPOTENCY_KEY_MISSING',
      'This operation requires an Idempotency-Key header.',
    )
  }
  const key = parseIdempotencyKey(field)
  // Before the body: a request that cannot be scoped is not worth reading. Only what is
  // really asynchronous is awaited: a scope already there costs no turn of the microtask queue.
  const found = config.scope(request)
  const scope = typeof found === 'string' ? found : await found
  // The route's limit when one was recorded (core's setBodyLimit, as http's limits() does): this
  // read is the first of the body, and must refuse what the route would, with the same 413,
  // never read past it. Content codings pass through: the fingerprint is over the bytes as
  // sent, and the route's reader answers a coding it does not take (415).
  const route = bodyLimitOf(request)
  const maxBytes = route === undefined || route > config.maxBodyBytes ? config.maxBodyBytes : route
  let body: Uint8Array
  try {
    // `consume: false`: a body the Request holds in memory stays unread, so the very same
    // Request can be handed on (see execution.ts).
    body = await readRequestBody(request, { maxBytes, consume: false })
  } catch (error) {
    throw bodyRefusal(error, maxBytes)
  }
  const parsed: { value?: unknown } = {}
  const fingerprint = fingerprintOf(
    {
      method: request.method,
      route: config.route(request),
      body,
      contentType: request.headers.get('content-type'),
      headers:
        config.fingerprintHeaders.length === 0
          ? NO_HEADERS
          : config.fingerprintHeaders.map((name) => [name, request.headers.get(name)] as const),
    },
    config.fingerprintEncoding,
    parsed,
  )
  const storeKey = deriveStoreKey(scope, key)
  return {
    key,
    scope: boundScope(scope),
    storeKey: await storeKey,
    fingerprint: await fingerprint,
    body,
    json: parsed.value,
  }
}

/**
 * What a failed body read becomes. A body over the limit, a broken stream or a malformed
 * Content-Length is the client's (413, 400); a body something read before this middleware
 * (`BODY_ALREADY_READ`, a body parser in front of it) is the server's, and passes through as a
 * 500, as does an adapter's own error from the stream, whose status stands.
 */
function bodyRefusal(error: unknown, maxBytes: number): unknown {
  if (!(error instanceof BodyReadError)) return error
  switch (error.code) {
    case 'BODY_TOO_LARGE':
      return new IdempotencyError(
        'BODY_TOO_LARGE',
        `The request body is larger than ${maxBytes} bytes.`,
        { maxBytes, cause: error },
      )
    case 'BODY_UNREADABLE':
    case 'CONTENT_LENGTH_INVALID':
      return new IdempotencyError('BODY_UNREADABLE', 'The request body could not be read.', {
        cause: error,
      })
    case 'BODY_ALREADY_READ':
      return error
  }
}

/** The scope a store bounds records by (see {@link PreparedRequest.scope}). */
function boundScope(scope: string): string {
  if (!scope.startsWith('ip:')) return scope
  const network = clientNetwork(scope.slice(3))
  return network === undefined ? scope : `ip:${network}`
}
