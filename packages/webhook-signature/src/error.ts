/**
 * The one error class of @api-blocks/webhook-signature: every refused delivery is a
 * {@link WebhookSignatureError}, a `ProblemError` (400 `bad-request`) with a stable
 * {@link WebhookSignatureErrorCode}.
 *
 * @module
 */
import { ProblemError, problems } from '@api-blocks/problem-details'

/**
 * Why a delivery was refused, in the one spelling of every api-blocks code. Stable: switch on
 * it in logs and metrics. Every code answers 400 `bad-request`.
 *
 * @example
 * ```ts
 * const code: WebhookSignatureErrorCode = 'SIGNATURE_MISMATCH'
 * ```
 */
export type WebhookSignatureErrorCode =
  /** A `webhook-id`, `webhook-timestamp` or `webhook-signature` header field is absent. */
  | 'HEADER_MISSING'
  /** A header field is too long, empty, or not in its format (a timestamp not all digits). */
  | 'HEADER_MALFORMED'
  /** The timestamp is further in the past than the tolerance. */
  | 'TIMESTAMP_TOO_OLD'
  /** The timestamp is further in the future than the tolerance. */
  | 'TIMESTAMP_TOO_NEW'
  /** No `v1` signature in the header matches the body under any of the secrets. */
  | 'SIGNATURE_MISMATCH'

/**
 * A webhook delivery that failed verification. It is an `ApiBlocksError` (through
 * `ProblemError`), so `toProblem()` and every adapter answer it as 400 `bad-request`.
 * `instanceof` holds across duplicate installs of this package.
 *
 * @example
 * ```ts
 * try {
 *   await verifier.verify(request.headers, body)
 * } catch (error) {
 *   if (error instanceof WebhookSignatureError) console.log(error.code) // 'SIGNATURE_MISMATCH'
 *   throw error
 * }
 * ```
 */
export class WebhookSignatureError extends ProblemError {
  static override readonly kind: string = 'webhook-signature.WebhookSignatureError'
  /** Why the delivery was refused (see {@link WebhookSignatureErrorCode}). */
  declare readonly code: WebhookSignatureErrorCode

  constructor(code: WebhookSignatureErrorCode, detail: string, options?: ErrorOptions) {
    super(problems.badRequest.create({ detail }), { code, cause: options?.cause })
    this.message = detail
  }
}
