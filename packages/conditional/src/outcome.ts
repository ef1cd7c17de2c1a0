/**
 * The outcomes of `evaluatePreconditions()`: a small discriminated union, and the frozen
 * instances it returns (shared, so evaluation allocates nothing).
 *
 * @module
 */

/**
 * The header field whose evaluation decided a non-`proceed` outcome.
 *
 * @example
 * ```ts
 * if (result.outcome === 'not-modified') {
 *   const field: PreconditionField = result.field // 'If-None-Match' or 'If-Modified-Since'
 * }
 * ```
 */
export type PreconditionField =
  | 'If-Match'
  | 'If-Unmodified-Since'
  | 'If-None-Match'
  | 'If-Modified-Since'

/**
 * The request may be performed. `ignoreRange` is `true` when the request has a Range field
 * the server must not honour: If-Range evaluated to false (RFC 9110 §13.2.2 step 5, answer
 * the full 200) or the method is not GET (§14.2). When `false`, a Range may be served (206) if
 * it is applicable; a server without range support ignores Range anyway.
 *
 * @example
 * ```ts
 * if (result.outcome === 'proceed') {
 *   const proceed: PreconditionProceed = result
 *   return proceed.ignoreRange ? fullResponse() : rangeResponse()
 * }
 * ```
 */
export interface PreconditionProceed {
  readonly outcome: 'proceed'
  readonly ignoreRange: boolean
}

/**
 * Answer 304 Not Modified, with `notModifiedResponse()`.
 *
 * @example
 * ```ts
 * if (result.outcome === 'not-modified') return toPreconditionResponse(result, { headers })
 * ```
 */
export interface PreconditionNotModified {
  readonly outcome: 'not-modified'
  readonly field: 'If-None-Match' | 'If-Modified-Since'
}

/**
 * Answer 412 Precondition Failed (the `precondition-failed` problem). `detail` explains why,
 * for the problem body. For If-Match and If-Unmodified-Since, RFC 9110 §13.1.1 and §13.1.4 let
 * a server answer 2xx instead when it can tell that this very change was already applied
 * (for example an idempotent replay of the same request).
 *
 * @example
 * ```ts
 * if (result.outcome === 'precondition-failed') throw new PreconditionError(result) // 412
 * ```
 */
export interface PreconditionFailed {
  readonly outcome: 'precondition-failed'
  readonly field: 'If-Match' | 'If-Unmodified-Since' | 'If-None-Match'
  readonly detail: string
}

/**
 * Answer 428 Precondition Required (the `precondition-required` problem, RFC 6585 §3).
 *
 * @example
 * ```ts
 * if (result.outcome === 'precondition-required') throw new PreconditionError(result) // 428
 * ```
 */
export interface PreconditionRequired {
  readonly outcome: 'precondition-required'
  readonly detail: string
}

/**
 * The result of `evaluatePreconditions()`.
 *
 * @example
 * ```ts
 * const result: PreconditionResult = evaluatePreconditions(request.method, request.headers, validators)
 * if (result.outcome !== 'proceed') return toPreconditionResponse(result, { request })
 * ```
 */
export type PreconditionResult =
  | PreconditionProceed
  | PreconditionNotModified
  | PreconditionFailed
  | PreconditionRequired

export const PROCEED: PreconditionProceed = Object.freeze({
  outcome: 'proceed',
  ignoreRange: false,
})
export const PROCEED_IGNORE_RANGE: PreconditionProceed = Object.freeze({
  outcome: 'proceed',
  ignoreRange: true,
})
export const NOT_MODIFIED_ETAG: PreconditionNotModified = Object.freeze({
  outcome: 'not-modified',
  field: 'If-None-Match',
})
export const NOT_MODIFIED_DATE: PreconditionNotModified = Object.freeze({
  outcome: 'not-modified',
  field: 'If-Modified-Since',
})
const failed = (field: PreconditionFailed['field'], detail: string): PreconditionFailed =>
  Object.freeze({ outcome: 'precondition-failed', field, detail })
export const IF_MATCH_FAILED: PreconditionFailed = failed(
  'If-Match',
  'If-Match does not match the current entity tag of the resource.',
)
export const IF_MATCH_ABSENT: PreconditionFailed = failed(
  'If-Match',
  'If-Match was sent, but the resource does not exist.',
)
export const IF_MATCH_INVALID: PreconditionFailed = failed(
  'If-Match',
  'If-Match is not "*" or a list of entity tags within the limits, so it matches nothing.',
)
export const IF_UNMODIFIED_FAILED: PreconditionFailed = failed(
  'If-Unmodified-Since',
  'The resource was modified after the If-Unmodified-Since date.',
)
export const IF_NONE_MATCH_FAILED: PreconditionFailed = failed(
  'If-None-Match',
  'If-None-Match matches the current entity tag of the resource.',
)
export const IF_NONE_MATCH_EXISTS: PreconditionFailed = failed(
  'If-None-Match',
  'If-None-Match is "*", but the resource already exists.',
)
export const IF_NONE_MATCH_INVALID: PreconditionFailed = failed(
  'If-None-Match',
  'If-None-Match is not "*" or a list of entity tags within the limits, so it cannot be evaluated.',
)
export const REQUIRED: PreconditionRequired = Object.freeze({
  outcome: 'precondition-required',
  detail: 'This request must carry If-Match (or If-None-Match: * to create the resource).',
})
