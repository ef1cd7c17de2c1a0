/**
 * What every api-blocks block shares, with no dependencies: the `Handler` and `Middleware`
 * types; the typed per-request context and the hand-offs between blocks (the whole body, the
 * header fields, the restored body, the parsed JSON); who the caller is (`Principal`), where it
 * connects from and which route matched; the branded error base with stable codes; and the
 * byte utilities (the bounded body reader, strict base64 and base64url, canonical JSON).
 * SHA-256 and HMAC are in `@api-blocks/core/crypto`.
 *
 * @example
 * ```ts
 * import { principalOf, readRequestBody } from '@api-blocks/core'
 *
 * async function handler(request: Request): Promise<Response> {
 *   const body = await readRequestBody(request, { maxBytes: 64 * 1024 })
 *   return Response.json({ caller: principalOf(request)?.subject ?? null, bytes: body.byteLength })
 * }
 * ```
 *
 * @module
 */

export type { DecodeBase64Options } from './base64.ts'
export { decodeBase64, decodeBase64url, encodeBase64, encodeBase64url } from './base64.ts'
export { bodyLimitOf, setBodyLimit } from './body-limit.ts'
export type { BodySlots } from './body-slots.ts'
export {
  defineBodySlots,
  handOnParsedJson,
  headerFieldsOf,
  readWholeBody,
  restoreBody,
  takeParsedJson,
  wholeBodyOf,
} from './body-slots.ts'
export type { JsonValue, ParsedCanonicalJson } from './canonical-json.ts'
export {
  canonicalizeJsonText,
  canonicalJson,
  MAX_CANONICAL_JSON_DEPTH,
  parseJsonCanonical,
} from './canonical-json.ts'
export type { ClientNetworkOptions } from './client-network.ts'
export { clientNetwork } from './client-network.ts'
export type { ContextKey } from './context.ts'
export {
  contextKey,
  copyContext,
  deleteContext,
  getContext,
  setContext,
  sharedContextKey,
} from './context.ts'
export type {
  StoreBreakerOptions,
  StoreBreakerState,
  StoreGuard,
  StoreGuardErrorCode,
  StoreGuardOptions,
} from './deadline.ts'
export { StoreGuardError, storeGuard, withDeadline } from './deadline.ts'
export type { EntityTagListScan } from './entity-tag-list.ts'
export {
  locateEntityTag,
  MAX_CONDITIONAL_HEADER_LENGTH,
  MAX_ENTITY_TAGS,
  scanEntityTagList,
} from './entity-tag-list.ts'
export type { ApiBlocksErrorOptions, ProblemDetails, ProblemSource } from './error.ts'
export { ApiBlocksError, isProblemSource } from './error.ts'
export type { BodyInitLike, Handler, HeadersInitLike, Middleware } from './handler.ts'
export { notModifiedResponse } from './not-modified.ts'
export type { Principal } from './principal.ts'
export { principalKey, principalOf, setPrincipal } from './principal.ts'
export type { BodyReadErrorCode, ReadAhead, ReadRequestBodyOptions } from './read-body.ts'
export {
  BodyReadError,
  concatBytes,
  readAhead,
  readRequestBody,
  readStream,
} from './read-body.ts'
export {
  clientAddressOf,
  routeParamsOf,
  setClientAddress,
  setRouteParams,
} from './request-info.ts'
