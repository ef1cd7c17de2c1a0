/**
 * The package's error: a 412 or 428 outcome in throwable form, for handlers that prefer to
 * throw and let the adapter answer the problem.
 *
 * @module
 */
import { ProblemError, problems } from '@api-blocks/problem-details'
import type { PreconditionFailed, PreconditionRequired } from './outcome.ts'

/**
 * The codes of {@link PreconditionError}: the codes of its two problem types,
 * `precondition-failed` (412) and `precondition-required` (428).
 *
 * @example
 * ```ts
 * const code: PreconditionErrorCode = 'PRECONDITION_REQUIRED'
 * ```
 */
export type PreconditionErrorCode = 'PRECONDITION_FAILED' | 'PRECONDITION_REQUIRED'

/**
 * A failed (412) or missing (428) precondition as a `ProblemError`: `code` is
 * `PRECONDITION_FAILED` or `PRECONDITION_REQUIRED`, `toProblem()` answers from the catalog,
 * and `result` keeps the evaluation that caused it. `instanceof` holds across duplicate
 * installs (see `ApiBlocksError` of `@api-blocks/core`).
 *
 * @example
 * ```ts
 * const result = evaluatePreconditions(request.method, request.headers, validators)
 * if (result.outcome === 'precondition-failed') throw new PreconditionError(result)
 * ```
 */
export class PreconditionError extends ProblemError {
  static override readonly kind: string = 'conditional.PreconditionError'
  declare readonly code: PreconditionErrorCode
  /** The evaluation that failed. */
  readonly result: PreconditionFailed | PreconditionRequired

  constructor(result: PreconditionFailed | PreconditionRequired, options?: ErrorOptions) {
    const failed = result.outcome === 'precondition-failed'
    const type = failed ? problems.preconditionFailed : problems.preconditionRequired
    const code: PreconditionErrorCode = failed ? 'PRECONDITION_FAILED' : 'PRECONDITION_REQUIRED'
    super(type.create({ detail: result.detail }), { ...options, code })
    this.result = result
  }
}
