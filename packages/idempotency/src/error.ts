/**
 * The one error class of @api-blocks/idempotency. Every refusal the middleware answers (a bad
 * or missing key, a reused key, a duplicate in flight, a store that is down, a body too large
 * or unreadable) and the one server misconfiguration it refuses to run with (a request it cannot
 * scope) is an {@link IdempotencyError}: a `ProblemError` from the shared catalog with a stable
 * {@link IdempotencyErrorCode} for logs and metrics.
 *
 * @module
 */
import type { ProblemDetails } from '@api-blocks/problem-details'
import { ProblemError, problems } from '@api-blocks/problem-details'

/**
 * What went wrong, in the one spelling of every api-blocks code (UPPER_SNAKE_CASE). Stable:
 * switch on it in logs and metrics. Clients see the problem type and status listed beside
 * each code.
 *
 * @example
 * ```ts
 * const code: IdempotencyErrorCode = 'IDEMPOTENCY_KEY_INVALID'
 * metrics.increment(`idempotency.rejected.${code}`)
 * ```
 */
export type IdempotencyErrorCode =
  /** 400 `idempotency-key-missing`: the route requires a key and the request has none. */
  | 'IDEMPOTENCY_KEY_MISSING'
  /** 400 `idempotency-key-invalid`: empty, too long, a bad character or a bad sf-string. */
  | 'IDEMPOTENCY_KEY_INVALID'
  /** 409 (422 in the `ietf` profile) `idempotency-key-reused`: the key was used with another request. */
  | 'IDEMPOTENCY_KEY_REUSED'
  /** 409 `idempotency-key-in-flight`: a request with the key is still running. */
  | 'IDEMPOTENCY_KEY_IN_FLIGHT'
  /** 409 `idempotency-key-in-flight`: a checkpoint found that another owner took the key over. */
  | 'IDEMPOTENCY_LEASE_LOST'
  /**
   * 500 `internal`: a keyed request with no principal, no client address and no `scope`
   * option. A server misconfiguration: the middleware throws it rather than let every
   * anonymous client share one scope.
   */
  | 'IDEMPOTENCY_SCOPE_UNKNOWN'
  /**
   * 429 `too-many-requests` with `Retry-After`: the client (its scope) holds as many live claims
   * as the store allows one scope (the memory store's `maxRecordsPerScope`); nothing ran.
   */
  | 'IDEMPOTENCY_SCOPE_FULL'
  /** 413 `payload-too-large`: the body is over `maxBodyBytes`. */
  | 'BODY_TOO_LARGE'
  /** 400 `bad-request`: the body could not be read (the client hung up, a malformed Content-Length). */
  | 'BODY_UNREADABLE'
  /**
   * 503 `service-unavailable` with `Retry-After`: the idempotency store failed or did not
   * answer in time (`storeTimeoutMs`); nothing was executed.
   */
  | 'STORE_UNAVAILABLE'
  /**
   * 503 `service-unavailable` with `Retry-After`: the store holds as many live claims as it
   * can (the memory store at `maxRecords`, only live claims left); nothing was executed.
   */
  | 'STORE_FULL'

function problemOf(code: IdempotencyErrorCode, detail: string, extra: Extra): ProblemDetails {
  switch (code) {
    case 'IDEMPOTENCY_KEY_MISSING':
      return problems.idempotencyKeyMissing.create({ detail })
    case 'IDEMPOTENCY_KEY_INVALID':
      return problems.idempotencyKeyInvalid.create({ detail })
    case 'IDEMPOTENCY_KEY_REUSED':
      return problems.idempotencyKeyReused.create(
        extra.status === undefined ? { detail } : { detail, status: extra.status },
      )
    case 'IDEMPOTENCY_KEY_IN_FLIGHT':
    case 'IDEMPOTENCY_LEASE_LOST':
      return problems.idempotencyKeyInFlight.create({
        detail,
        retry_after: extra.retryAfter ?? 1,
      })
    case 'IDEMPOTENCY_SCOPE_UNKNOWN':
      // A server fault: the client learns nothing of the configuration (the message does).
      return problems.internal.create()
    case 'IDEMPOTENCY_SCOPE_FULL':
      // RFC 6585 §4: this client sent too many requests (its own keys), not a server fault.
      return problems.tooManyRequests.create({ detail })
    case 'BODY_TOO_LARGE':
      return problems.payloadTooLarge.create({ detail, max_bytes: extra.maxBytes ?? 0 })
    case 'BODY_UNREADABLE':
      return problems.badRequest.create({ detail })
    case 'STORE_UNAVAILABLE':
    case 'STORE_FULL':
      return problems.serviceUnavailable.create({ detail })
  }
}

interface Extra {
  /** The status override of `IDEMPOTENCY_KEY_REUSED` (422 in the `ietf` profile). */
  status?: number
  /** Seconds, for a duplicate in flight and a lost lease: the problem's `retry_after` and the header. */
  retryAfter?: number
  /** Bytes, for `BODY_TOO_LARGE`. */
  maxBytes?: number
}

/**
 * Options of {@link IdempotencyError} besides the standard `cause`.
 *
 * @example
 * ```ts
 * throw new IdempotencyError('IDEMPOTENCY_KEY_IN_FLIGHT', 'Still running.', { retryAfter: 2 })
 * ```
 */
export interface IdempotencyErrorOptions extends ErrorOptions {
  /** The status of an `IDEMPOTENCY_KEY_REUSED` problem when not the catalog's 409 (the `ietf` profile: 422). */
  status?: number
  /**
   * Seconds a client should wait, for `IDEMPOTENCY_KEY_IN_FLIGHT`, `IDEMPOTENCY_LEASE_LOST`,
   * `IDEMPOTENCY_SCOPE_FULL` and `STORE_UNAVAILABLE` (default 1).
   */
  retryAfter?: number
  /** The body limit, for `BODY_TOO_LARGE`. */
  maxBytes?: number
}

/**
 * A refused idempotent request. It is an `ApiBlocksError` (through `ProblemError`), so every
 * adapter (and `errorToProblemResponse`) answers it as its problem; `headers` holds the
 * response header fields that go with it (`Retry-After` for a duplicate in flight and a store
 * that is down).
 * `instanceof` holds across duplicate installs of this package.
 *
 * @example
 * ```ts
 * try {
 *   parseIdempotencyKey(request.headers.get('idempotency-key') ?? '')
 * } catch (error) {
 *   if (error instanceof IdempotencyError) console.log(error.code) // 'IDEMPOTENCY_KEY_INVALID'
 *   throw error
 * }
 * ```
 */
export class IdempotencyError extends ProblemError {
  static override readonly kind: string = 'idempotency.IdempotencyError'
  /** What went wrong (see {@link IdempotencyErrorCode}). */
  declare readonly code: IdempotencyErrorCode
  /**
   * Header fields to send with the problem: `Retry-After` for a duplicate in flight, a lost
   * lease and a store that is unavailable.
   */
  readonly headers: Readonly<Record<string, string>>

  constructor(code: IdempotencyErrorCode, detail: string, options?: IdempotencyErrorOptions) {
    const extra: Extra = {}
    if (options?.status !== undefined) extra.status = options.status
    if (options?.retryAfter !== undefined) extra.retryAfter = options.retryAfter
    if (options?.maxBytes !== undefined) extra.maxBytes = options.maxBytes
    super(problemOf(code, detail, extra), { code, cause: options?.cause })
    // The message says what happened, for logs, even where the problem says nothing (a 500).
    this.message = detail
    // RFC 9110 §10.2.3: Retry-After with a 409 in flight and with a 503 (§15.6.4).
    this.headers =
      code === 'IDEMPOTENCY_KEY_IN_FLIGHT' ||
      code === 'IDEMPOTENCY_LEASE_LOST' ||
      code === 'IDEMPOTENCY_SCOPE_FULL' ||
      code === 'STORE_UNAVAILABLE' ||
      code === 'STORE_FULL'
        ? { 'retry-after': String(extra.retryAfter ?? 1) }
        : {}
  }
}
