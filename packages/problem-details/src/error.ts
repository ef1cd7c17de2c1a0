/**
 * The throwable form of a problem, and the `toProblem()` protocol every block's errors follow.
 *
 * @module
 */
import type { ProblemDetails } from './problem.ts'
import { attachTitles, titlesOf } from './titles.ts'

const BRAND: unique symbol = Symbol.for('api-blocks.problem-error') as never

/** Anything that can describe itself as a problem: every api-blocks error implements it. */
export interface ProblemSource {
  toProblem(): ProblemDetails
}

/**
 * Whether `value` implements {@link ProblemSource}. Works across duplicate installs, since it
 * checks the shape, not a class identity.
 */
export function isProblemSource(value: unknown): value is ProblemSource {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { toProblem?: unknown }).toProblem === 'function'
  )
}

/**
 * An error that carries one problem occurrence. Thrown from handlers, it becomes an
 * `application/problem+json` response in every adapter.
 *
 * `instanceof` works across duplicate installs of this package: the check is a
 * `Symbol.for` brand, as undici does.
 *
 * @example
 * ```ts
 * throw new ProblemError({ type: 'about:blank', title: 'Not Found', status: 404 })
 * ```
 */
export class ProblemError<Ext = Record<never, never>> extends Error implements ProblemSource {
  /** The stable machine code of the problem type. */
  readonly code: string
  /** The HTTP status the problem is answered with. */
  readonly status: number
  /** The problem occurrence. */
  readonly problem: ProblemDetails & Ext

  constructor(problem: ProblemDetails & Ext, options?: ErrorOptions) {
    super(problem.detail ?? problem.title, options)
    this.name = 'ProblemError'
    this.problem = problem
    this.status = problem.status
    this.code = problem.type.split(/[/#:]/).pop() ?? problem.type
    Object.defineProperty(this, BRAND, { value: true })
  }

  /** The problem occurrence, as a plain object (a copy that keeps the translated titles). */
  toProblem(): ProblemDetails & Ext {
    return attachTitles({ ...this.problem }, titlesOf(this.problem) ?? {})
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // Subclasses keep the ordinary prototype check; only the base class uses the brand.
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was called on
    if (this !== ProblemError) return Function.prototype[Symbol.hasInstance].call(this, value)
    return typeof value === 'object' && value !== null && BRAND in value
  }
}
