/**
 * OAuth 2.0 bearer tokens for resource servers: the token from `Authorization: Bearer` only
 * (RFC 6750), JWT access tokens (RFC 9068) verified on jose with pinned algorithms and a cached
 * JWKS, opaque tokens through introspection (RFC 7662) with a bounded cache, scopes, RFC 6750
 * challenges as problem+json, and the request's `Principal` for the blocks that key on it.
 *
 * @example
 * ```ts
 * import { bearer, requireScopes } from '@api-blocks/bearer'
 *
 * const authenticate = bearer({ jwt: { issuer, audience, jwksUrl } })
 * const readOrders = requireScopes('read:orders')
 * ```
 *
 * @module
 */

export type { BearerAuthorization } from './authorization.ts'
export {
  hasQueryAccessToken,
  MAX_ACCESS_TOKEN_LENGTH,
  parseBearerAuthorization,
} from './authorization.ts'
export type { BearerChallenge } from './challenge.ts'
export { bearerChallenge, formatBearerChallenge, isScopeToken } from './challenge.ts'
export type { BearerChallengeError, BearerErrorCode, BearerErrorOptions } from './error.ts'
export { BearerError } from './error.ts'
export { bearer, requireScopes } from './middleware.ts'
export type {
  BearerFetch,
  BearerOptions,
  HttpIntrospectionOptions,
  InProcessIntrospectionOptions,
  IntrospectionResponse,
  JsonWebKeyLike,
  JwtVerificationOptions,
  TokenVerifier,
} from './options.ts'
export { JWKS_STALE_GRACE_MS } from './options.ts'
export type { BearerErrorResponseOptions } from './response.ts'
export { bearerErrorResponse } from './response.ts'
export { createTokenVerifier } from './verifier.ts'
