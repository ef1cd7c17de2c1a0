/**
 * The throwable form of a problem. The `toProblem()` protocol and the error base it builds on
 * live in `@api-blocks/core`, which every block shares.
 *
 * @module
 */
import type { ProblemDetails } from '@api-blocks/core'
import { ApiBlocksError } from '@api-blocks/core'
import { problemCode } from './code.ts'
import { attachTitles, titlesOf } from './internal/titles.ts'

/**
 * Options of {@link ProblemError}: the standard `cause`, and a `code` finer than the problem
 * type's, for a subclass whose errors share one problem type (a pagination error's
 * `CURSOR_EXPIRED` answers the `invalid-cursor` problem).
 *
 * @example
 * ```ts
 * const options: ProblemErrorOptions = { code: 'CURSOR_EXPIRED', cause: error }
 * ```
 */
export interface ProblemErrorOptions extends ErrorOptions {
  /** The error's code, UPPER_SNAKE_CASE (default: the problem type's, see `problemCode`). */
  code?: string
}

/**
 * An error that carries one problem occurrence. Thrown from handlers, it becomes an
 * `application/problem+json` response in every adapter. Its `code` is the problem type's code
 * (`NOT_FOUND` for `not-found`, see `problemCode`) unless a subclass names a finer one, and its
 * `status` is the problem's.
 *
 * `instanceof` works across duplicate installs of this package (see `ApiBlocksError`).
 *
 * @example
 * ```ts
 * throw new ProblemError({ type: 'about:blank', title: 'Not Found', status: 404 })
 * ```
 */
export class ProblemError<Ext = Record<never, never>> extends ApiBlocksError {
  static override readonly kind: string = 'problem-details.ProblemError'
  /** The problem occurrence. */
  readonly problem: ProblemDetails & Ext

  constructor(problem: ProblemDetails & Ext, options?: ProblemErrorOptions) {
    super(options?.code ?? problemCode(problem.type), problem.detail ?? problem.title, {
      ...options,
      status: problem.status,
    })
    this.problem = problem
  }

  /** The problem occurrence, as a plain object (a copy that keeps the translated titles). */
  override toProblem(): ProblemDetails & Ext {
    return attachTitles({ ...this.problem }, titlesOf(this.problem) ?? {})
  }
}
