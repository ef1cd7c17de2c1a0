/**
 * The one error class of @api-blocks/pagination. Every rejection of client input (a cursor, a
 * `limit`, a Relay argument) is a {@link PaginationError}: a `ProblemError` answering
 * `invalid-cursor` (400) or `bad-request` (400) from the shared catalog, with a stable
 * {@link PaginationErrorCode} for logs and metrics.
 *
 * @module
 */
import { ProblemError, problems } from '@api-blocks/problem-details'

/**
 * Why client input was rejected: the `code` of a {@link PaginationError}. Stable: switch on it
 * in logs and metrics. Clients only see the problem type (`invalid-cursor` for the `CURSOR_*`
 * codes, `bad-request` for the others) and a human `detail`.
 *
 * @example
 * ```ts
 * const retryable: PaginationErrorCode[] = ['CURSOR_EXPIRED', 'CURSOR_UNKNOWN_KEY']
 * ```
 */
export type PaginationErrorCode =
  /** Longer than the codec's `maxLength`; rejected before any decoding. */
  | 'CURSOR_TOO_LONG'
  /** Not `v<n>.<key id>.<payload>.<signature>` in canonical base64url, or a bad payload. */
  | 'CURSOR_MALFORMED'
  /** A cursor format version this codec does not read. */
  | 'CURSOR_VERSION'
  /** Signed with a key id that is not (or no longer) in the key ring. */
  | 'CURSOR_UNKNOWN_KEY'
  /** The HMAC does not verify: tampered, truncated or forged. */
  | 'CURSOR_SIGNATURE'
  /** Past its expiry, by the codec's clock. */
  | 'CURSOR_EXPIRED'
  /** Issued for another sort (other keys or the other direction). */
  | 'CURSOR_SORT_MISMATCH'
  /** Issued for other filters (another query). */
  | 'CURSOR_QUERY_MISMATCH'
  /** A `limit` that is not a whole number of at least zero. */
  | 'LIMIT_INVALID'
  /** A pagination parameter given more than once. */
  | 'PARAMETER_REPEATED'
  /** Relay `first` and `last` given together (this library does not serve both). */
  | 'FIRST_AND_LAST'
  /** A Relay `first` or `last` that is negative or not an integer. */
  | 'ARGUMENT_INVALID'

/**
 * A rejected pagination input. It is a `ProblemError`, so every adapter (and
 * `errorToProblemResponse`) answers it as its 400 problem: `invalid-cursor` for the `CURSOR_*`
 * codes, `bad-request` for the others. `instanceof` holds across duplicate installs (see
 * `ApiBlocksError` of `@api-blocks/core`).
 *
 * @example
 * ```ts
 * try {
 *   await cursors.decode(after)
 * } catch (error) {
 *   if (error instanceof PaginationError && error.code === 'CURSOR_EXPIRED') metrics.expired++
 *   throw error // answered as the invalid-cursor problem, 400
 * }
 * ```
 */
export class PaginationError extends ProblemError {
  static override readonly kind: string = 'pagination.PaginationError'
  declare readonly code: PaginationErrorCode

  constructor(code: PaginationErrorCode, detail: string, options?: ErrorOptions) {
    const type = code.startsWith('CURSOR_') ? problems.invalidCursor : problems.badRequest
    super(type.create({ detail }), { ...options, code })
  }
}
