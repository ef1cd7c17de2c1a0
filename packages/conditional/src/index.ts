/**
 * RFC 9110 conditional requests: entity tags and HTTP-dates, `evaluatePreconditions()` in the
 * order of §13.2.2 (304, 412, and the optional 428 of RFC 6585), the responses for each
 * outcome, validators from versions, and Cache-Control presets.
 *
 * @example
 * ```ts
 * import { etagFromVersion, evaluatePreconditions, toPreconditionResponse } from '@api-blocks/conditional'
 * const result = evaluatePreconditions(request.method, request.headers, { etag: etagFromVersion(order.version) })
 * if (result.outcome !== 'proceed') return toPreconditionResponse(result, { request })
 * ```
 *
 * @module
 */

// The one 304 builder lives in core (compress() of @api-blocks/http uses it too).
export { notModifiedResponse } from '@api-blocks/core'
export type { BodyEtagOptions } from './body-etag.ts'
export { bodyEtag, DEFAULT_BODY_ETAG_MAX_BYTES } from './body-etag.ts'
export type { CacheControlPresets } from './cache-control.ts'
export { cacheControlPresets } from './cache-control.ts'
export type { EntityTag, EntityTagList } from './entity-tag.ts'
export {
  formatEntityTag,
  MAX_CONDITIONAL_HEADER_LENGTH,
  MAX_ENTITY_TAGS,
  parseEntityTag,
  parseEntityTagList,
  strongCompare,
  weakCompare,
} from './entity-tag.ts'
export type { PreconditionErrorCode } from './error.ts'
export { PreconditionError } from './error.ts'
export type { EvaluateOptions, HeaderSource, Validators } from './evaluate.ts'
export { evaluatePreconditions } from './evaluate.ts'
export type { ParseHttpDateOptions } from './http-date.ts'
export { formatHttpDate, parseHttpDate } from './http-date.ts'
export type {
  PreconditionFailed,
  PreconditionField,
  PreconditionNotModified,
  PreconditionProceed,
  PreconditionRequired,
  PreconditionResult,
} from './outcome.ts'
export type { CheckPreconditionsOptions, PreconditionResponseOptions } from './response.ts'
export { checkPreconditions, toPreconditionResponse } from './response.ts'
export type { EtagOptions } from './validators.ts'
export { etagFromBody, etagFromVersion, validatorHeaders, withValidators } from './validators.ts'
