/**
 * The Fetch-first HTTP core of api-blocks: `compose()`, request ids, content negotiation,
 * CORS, OPTIONS/HEAD/405, the Vary / Cache-Control / Expose-Headers accumulator, body limits,
 * compression, version deprecation headers, request limits and Structured Field Values
 * (RFC 9651). Everything works on Web `Request`, `Response` and `Headers`; the `Handler` and
 * `Middleware` types and the per-request context are `@api-blocks/core`'s.
 *
 * @example
 * ```ts
 * import { compose, cors, methods, requestId } from '@api-blocks/http'
 * const app = compose(cors({ origin: ['https://app.example'] }), requestId())(
 *   methods({ GET: async () => Response.json({ ok: true }) }),
 * )
 * ```
 *
 * @module
 */

export type { Handler, Middleware } from '@api-blocks/core'
export type { ContentCoding } from './body/encoding.ts'
export { ContentEncodingError, DEFAULT_CONTENT_CODINGS } from './body/encoding.ts'
export type { ReadBodyOptions } from './body/index.ts'
export {
  DEFAULT_MAX_BODY_BYTES,
  JSON_MEDIA_TYPES,
  readBody,
  readJson,
  readText,
} from './body/index.ts'
export { compose } from './compose.ts'
export type { CompressOptions, Encoder } from './compress/index.ts'
export {
  CODED_ETAG_SEPARATOR,
  codedEtag,
  compress,
  DEFAULT_COMPRESS_THRESHOLD,
  isCompressible,
  webEncoders,
} from './compress/index.ts'
export type { CorsOptions, CorsOrigin } from './cors/index.ts'
export {
  cors,
  DEFAULT_ALLOW_HEADERS,
  DEFAULT_ALLOW_METHODS,
  EXPOSABLE_HEADERS,
  MAX_ORIGIN_LENGTH,
} from './cors/index.ts'
export type { ProblemRenderOptions } from './errors.ts'
export { errorBoundary, errorResponse, problemResponse } from './errors.ts'
export type { CacheDirective, MergedHeaderName } from './headers/index.ts'
export {
  formatCacheControl,
  mergeCacheControl,
  mergeExposeHeaders,
  mergeHeader,
  mergeResponseHeaders,
  mergeVary,
  parseCacheControl,
  withHeaders,
} from './headers/index.ts'
export type { LimitsOptions } from './limits/index.ts'
export {
  DEFAULT_LIMITED_HEADERS,
  DEFAULT_MAX_HEADER_VALUE_LENGTH,
  DEFAULT_MAX_URL_LENGTH,
  limits,
} from './limits/index.ts'
export type { MethodHandlers } from './methods/index.ts'
export { allowedMethods, methodNotAllowed, methods } from './methods/index.ts'
export type {
  CodingRange,
  MediaRange,
  MediaType,
  MediaTypeOptions,
  Negotiated,
  Negotiation,
  NegotiationOffers,
  NegotiationOptions,
} from './negotiate/index.ts'
export {
  MAX_ACCEPT_ENCODING_LENGTH,
  MAX_ACCEPT_LENGTH,
  MAX_ACCEPT_MEMBERS,
  MAX_CONTENT_TYPE_LENGTH,
  matchesMediaType,
  negotiate,
  negotiateContentLanguage,
  negotiatedOf,
  negotiateEncoding,
  negotiateMediaType,
  negotiation,
  parseAccept,
  parseAcceptEncoding,
  parseMediaType,
  requireContentType,
  weighMediaType,
} from './negotiate/index.ts'
export type { RequestIdOptions } from './request-id/index.ts'
export {
  isValidRequestId,
  MAX_REQUEST_ID_LENGTH,
  REQUEST_ID_PATTERN,
  requestId,
  requestIdOf,
} from './request-id/index.ts'
export type {
  BareItem,
  Dictionary,
  InnerList,
  Item,
  ListMember,
  Params,
} from './structured-fields/index.ts'
export {
  isInnerList,
  MAX_STRUCTURED_FIELD_LENGTH,
  parseDictionary,
  parseItem,
  parseList,
  serializeBareItem,
  serializeDictionary,
  serializeItem,
  serializeList,
  serializeString,
} from './structured-fields/index.ts'
export type { VersionDeprecationOptions } from './version/index.ts'
export {
  formatDeprecation,
  parseDeprecation,
  versionDeprecation,
} from './version/index.ts'
