/**
 * The one error class of @api-blocks/pagination. Every rejection of client input (a cursor, a
 * `limit`, a Relay argument) is a {@link PaginationError}: a {@link ProblemError} answering
 * `invalid-cursor` (400) or `bad-request` (400) from the shared catalog, with a stable
 * {@link PaginationErrorReason} for logs and metrics.
 *
 * @module
 */
import { ProblemError, problems } from '@api-blocks/problem-details'

/**
 * Why client input was rejected. Stable: switch on it in logs and metrics. Clients only see the
 * problem type (`invalid-cursor` for the `cursor_*` reasons, `bad-request` for the others) and
 * a human `detail`.
 */
export type PaginationErrorReason =
  /** Longer than the codec's `maxLength`; rejected before any decoding. */
  | 'cursor_too_long'
  /** Not `v<n>.<key id>.<payload>.<signature>` in canonical base64url, or a bad payload. */
  | 'cursor_malformed'
  /** A cursor format version this codec does not read. */
  | 'cursor_version'
  /** Signed with a key id that is not (or no longer) in the key ring. */
  | 'cursor_unknown_key'
  /** The HMAC does not verify: tampered, truncated or forged. */
  | 'cursor_signature'
  /** Past its expiry, by the codec's clock. */
  | 'cursor_expired'
  /** Issued for another sort (other keys or the other direction). */
  | 'cursor_sort_mismatch'
  /** Issued for other filters (another query). */
  | 'cursor_query_mismatch'
  /** A `limit` that is not a whole number of at least zero. */
  | 'limit_invalid'
  /** A pagination parameter given more than once. */
  | 'parameter_repeated'
  /** Relay `first` and `last` given together (this library does not serve both). */
  | 'first_and_last'
  /** A Relay `first` or `last` that is negative or not an integer. */
  | 'argument_invalid'

const BRAND: unique symbol = Symbol.for('api-blocks.pagination-error') as never

/**
 * A rejected pagination input. It is a {@link ProblemError}, so every adapter (and
 * `errorToProblemResponse`) answers it as its 400 problem.
 *
 * `instanceof` works across duplicate installs of this package: the check is a `Symbol.for`
 * brand, as undici does.
 *
 * @example
 * ```ts
 * try {
 *   await cursors.decode(after)
 * } catch (error) {
 *   if (error instanceof PaginationError && error.reason === 'cursor_expired') metrics.expired++
 *   throw error // answered as the invalid-cursor problem, 400
 * }
 * ```
 */
export class PaginationError extends ProblemError {
  /** Why the input was rejected. */
  readonly reason: PaginationErrorReason

  constructor(reason: PaginationErrorReason, detail: string, options?: ErrorOptions) {
    const type = reason.startsWith('cursor_') ? problems.invalidCursor : problems.badRequest
    super(type.create({ detail }), options)
    this.name = 'PaginationError'
    this.reason = reason
    Object.defineProperty(this, BRAND, { value: true })
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value
  }
}
