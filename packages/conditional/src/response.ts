/**
 * Responses for the outcomes of `evaluatePreconditions()`: 304 with the header fields RFC 9110
 * §15.4.5 keeps, and 412 / 428 as problems from the catalog.
 *
 * @module
 */
import type { HeadersInitLike } from '@api-blocks/core'
import { notModifiedResponse } from '@api-blocks/core'
import type { ProblemResponseOptions } from '@api-blocks/problem-details'
import { problems, toProblemResponse } from '@api-blocks/problem-details'
import type { EvaluateOptions, Validators } from './evaluate.ts'
import { evaluatePreconditions } from './evaluate.ts'
import type {
  PreconditionFailed,
  PreconditionNotModified,
  PreconditionRequired,
} from './outcome.ts'
import { validatorHeaders } from './validators.ts'

/**
 * Options of {@link toPreconditionResponse}.
 *
 * @example
 * ```ts
 * const options: PreconditionResponseOptions = {
 *   request,
 *   headers: { etag: '"7"', 'cache-control': 'no-cache' }, // for a 304
 *   problemHeaders: { 'x-request-id': requestId }, // for a 412 or 428
 * }
 * ```
 */
export interface PreconditionResponseOptions extends Omit<ProblemResponseOptions, 'headers'> {
  /**
   * The header fields the 2xx response would have carried (ETag, Cache-Control, Vary,
   * Content-Location…). Only the 304 uses them, through {@link notModifiedResponse}.
   */
  headers?: HeadersInitLike
  /**
   * More header fields for the 412 and 428 problem responses (X-Request-Id, CORS…). The
   * 2xx fields are not copied onto a problem: validators and cache lifetimes describe the
   * representation, not the failure.
   */
  problemHeaders?: HeadersInitLike
}

/**
 * The Response for an outcome other than `proceed`: 304 (via {@link notModifiedResponse}),
 * 412 `precondition-failed` or 428 `precondition-required` (problems from the catalog, via
 * `toProblemResponse`, with the outcome's `detail`).
 *
 * @example
 * ```ts
 * const result = evaluatePreconditions(request.method, request.headers, validators)
 * if (result.outcome !== 'proceed') {
 *   return toPreconditionResponse(result, { request, headers: { ...validatorHeaders(validators), 'cache-control': 'no-cache' } })
 * }
 * ```
 */
export function toPreconditionResponse(
  result: PreconditionNotModified | PreconditionFailed | PreconditionRequired,
  options: PreconditionResponseOptions = {},
): Response {
  const { headers, problemHeaders, ...problemOptions } = options
  switch (result.outcome) {
    case 'not-modified':
      return notModifiedResponse(headers)
    case 'precondition-failed':
      return toProblemResponse(problems.preconditionFailed.create({ detail: result.detail }), {
        ...problemOptions,
        ...(problemHeaders === undefined ? {} : { headers: problemHeaders }),
      })
    case 'precondition-required':
      return toProblemResponse(problems.preconditionRequired.create({ detail: result.detail }), {
        ...problemOptions,
        ...(problemHeaders === undefined ? {} : { headers: problemHeaders }),
      })
  }
}

/**
 * Options of {@link checkPreconditions}.
 *
 * @example
 * ```ts
 * const options: CheckPreconditionsOptions = { requireIfMatch: true, headers: { 'cache-control': 'no-cache' } }
 * const early = checkPreconditions(request, validators, options)
 * ```
 */
export interface CheckPreconditionsOptions
  extends EvaluateOptions,
    Omit<PreconditionResponseOptions, 'request'> {}

/**
 * The Fetch-layer shortcut: evaluates the request's preconditions against the validators and
 * returns the 304, 412 or 428 Response, or `undefined` when the handler should go on. The 304
 * carries ETag and Last-Modified from the validators (unless `headers` sets them) plus
 * `headers`. Range handling is left out: use {@link evaluatePreconditions} for `ignoreRange`.
 *
 * Call it once the resource is found and the caller is authorised (RFC 9110 §13.2.1).
 *
 * @example
 * ```ts
 * const order = await orders.find(id)
 * if (!order) return toProblemResponse(problems.notFound.create(), { request })
 * const validators = { etag: etagFromVersion(order.version), lastModified: order.updatedAt }
 * const early = checkPreconditions(request, validators, { headers: { 'cache-control': 'no-cache' } })
 * if (early) return early
 * ```
 */
export function checkPreconditions(
  request: Request,
  validators: Validators,
  options: CheckPreconditionsOptions = {},
): Response | undefined {
  const { requireIfMatch, clock, headers, ...responseOptions } = options
  const result = evaluatePreconditions(request.method, request.headers, validators, {
    requireIfMatch,
    clock,
  })
  if (result.outcome === 'proceed') return undefined
  let merged: HeadersInitLike | undefined
  if (result.outcome === 'not-modified') {
    const all = new Headers(headers)
    for (const [name, value] of Object.entries(validatorHeaders(validators))) {
      if (!all.has(name)) all.set(name, value)
    }
    merged = all
  }
  return toPreconditionResponse(result, {
    ...responseOptions,
    request,
    ...(merged === undefined ? {} : { headers: merged }),
  })
}
