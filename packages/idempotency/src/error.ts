/**
 * The one error class of @api-blocks/idempotency. Every refusal the middleware answers (a bad
 * or missing key, a reused key, a duplicate in flight, a store that is down, a body too large
 * or unreadable) is an {@link IdempotencyError}: a {@link ProblemError} from the shared catalog
 * with a stable {@link IdempotencyErrorReason} for logs and metrics.
 *
 * @module
 */
import type { ProblemDetails } from '@api-blocks/problem-details'
import { ProblemError, problems } from '@api-blocks/problem-details'

/**
 * Why a request was refused. Stable: switch on it in logs and metrics. Clients see the problem
 * type and status listed beside each reason.
 *
 * @example
 * ```ts
 * const reason: IdempotencyErrorReason = 'key_invalid'
 * metrics.increment(`idempotency.rejected.${reason}`)
 * ```
 */
export type IdempotencyErrorReason =
  /** 400 `idempotency-key-missing`: the route requires a key and the request has none. */
  | 'key_missing'
  /** 400 `idempotency-key-invalid`: empty, too long, a bad character or a bad sf-string. */
  | 'key_invalid'
  /** 409 (422 in the `ietf` profile) `idempotency-key-reused`: the key was used with another request. */
  | 'key_reused'
  /** 409 `idempotency-key-in-flight`: a request with the key is still running. */
  | 'in_flight'
  /** 413 `payload-too-large`: the body is over `maxBodyBytes`. */
  | 'body_too_large'
  /** 400 `bad-request`: the body could not be read (the client hung up, a broken stream). */
  | 'body_unreadable'
  /** 503 `service-unavailable`: the idempotency store failed; nothing was executed. */
  | 'store_unavailable'
  /** 409 `idempotency-key-in-flight`: a checkpoint found that another owner took the key over. */
  | 'lease_lost'

const BRAND: unique symbol = Symbol.for('api-blocks.idempotency-error') as never

function problemOf(reason: IdempotencyErrorReason, detail: string, extra: Extra): ProblemDetails {
  switch (reason) {
    case 'key_missing':
      return problems.idempotencyKeyMissing.create({ detail })
    case 'key_invalid':
      return problems.idempotencyKeyInvalid.create({ detail })
    case 'key_reused':
      return problems.idempotencyKeyReused.create(
        extra.status === undefined ? { detail } : { detail, status: extra.status },
      )
    case 'in_flight':
    case 'lease_lost':
      return problems.idempotencyKeyInFlight.create({
        detail,
        retry_after: extra.retryAfter ?? 1,
      })
    case 'body_too_large':
      return problems.payloadTooLarge.create({ detail, max_bytes: extra.maxBytes ?? 0 })
    case 'body_unreadable':
      return problems.badRequest.create({ detail })
    case 'store_unavailable':
      return problems.serviceUnavailable.create({ detail })
  }
}

interface Extra {
  /** The status override of `key_reused` (422 in the `ietf` profile). */
  status?: number
  /** Seconds, for `in_flight` and `lease_lost`: the problem's `retry_after` and the header. */
  retryAfter?: number
  /** Bytes, for `body_too_large`. */
  maxBytes?: number
}

/**
 * Options of {@link IdempotencyError} besides the standard `cause`.
 *
 * @example
 * ```ts
 * throw new IdempotencyError('in_flight', 'Still running.', { retryAfter: 2 })
 * ```
 */
export interface IdempotencyErrorOptions extends ErrorOptions {
  /** The status of a `key_reused` problem when not the catalog's 409 (the `ietf` profile: 422). */
  status?: number
  /** Seconds a client should wait, for `in_flight` and `lease_lost` (default 1). */
  retryAfter?: number
  /** The body limit, for `body_too_large`. */
  maxBytes?: number
}

/**
 * A refused idempotent request. It is a {@link ProblemError}, so every adapter (and
 * `errorToProblemResponse`) answers it as its problem; `headers` holds the response header
 * fields that go with it (`Retry-After` for a duplicate in flight).
 *
 * `instanceof` works across duplicate installs of this package: the check is a `Symbol.for`
 * brand, as undici does.
 *
 * @example
 * ```ts
 * try {
 *   parseIdempotencyKey(request.headers.get('idempotency-key') ?? '')
 * } catch (error) {
 *   if (error instanceof IdempotencyError) console.log(error.reason) // 'key_invalid'
 *   throw error
 * }
 * ```
 */
export class IdempotencyError extends ProblemError {
  /** Why the request was refused. */
  readonly reason: IdempotencyErrorReason
  /** Header fields to send with the problem (`Retry-After` for `in_flight` and `lease_lost`). */
  readonly headers: Readonly<Record<string, string>>

  constructor(reason: IdempotencyErrorReason, detail: string, options?: IdempotencyErrorOptions) {
    const extra: Extra = {}
    if (options?.status !== undefined) extra.status = options.status
    if (options?.retryAfter !== undefined) extra.retryAfter = options.retryAfter
    if (options?.maxBytes !== undefined) extra.maxBytes = options.maxBytes
    super(
      problemOf(reason, detail, extra),
      options?.cause === undefined ? undefined : { cause: options.cause },
    )
    this.name = 'IdempotencyError'
    this.reason = reason
    this.headers =
      reason === 'in_flight' || reason === 'lease_lost'
        ? { 'retry-after': String(extra.retryAfter ?? 1) }
        : {}
    Object.defineProperty(this, BRAND, { value: true })
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value
  }
}
