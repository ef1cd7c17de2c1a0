/**
 * The package's error: a 412 or 428 outcome in throwable form, for handlers that prefer to
 * throw and let the adapter answer the problem.
 *
 * @module
 */
import { ProblemError, problems } from '@api-blocks/problem-details'
import type { PreconditionFailed, PreconditionRequired } from './outcome.ts'

/**
 * A failed (412) or missing (428) precondition as a {@link ProblemError}: `code` is
 * `precondition-failed` or `precondition-required`, `toProblem()` answers from the catalog,
 * and `result` keeps the evaluation that caused it.
 *
 * @example
 * ```ts
 * const result = evaluatePreconditions(request.method, request.headers, validators)
 * if (result.outcome === 'precondition-failed') throw new PreconditionError(result)
 * ```
 */
export class PreconditionError extends ProblemError {
  /** The evaluation that failed. */
  readonly result: PreconditionFailed | PreconditionRequired

  constructor(result: PreconditionFailed | PreconditionRequired, options?: ErrorOptions) {
    const type =
      result.outcome === 'precondition-failed'
        ? problems.preconditionFailed
        : problems.preconditionRequired
    super(type.create({ detail: result.detail }), options)
    this.name = 'PreconditionError'
    this.result = result
  }
}
