/**
 * The one error class of @api-blocks/bearer. Every refusal of a protected request (no token, a
 * malformed request, a token that is not valid, a missing scope, an authorisation server that
 * cannot be reached) is a {@link BearerError}: a `ProblemError` from the shared catalog with a
 * stable {@link BearerErrorCode}, and the RFC 6750 §3.1 error code that goes into
 * `WWW-Authenticate`.
 *
 * @module
 */
import type { ProblemDetails } from '@api-blocks/problem-details'
import { ProblemError, problems } from '@api-blocks/problem-details'

/**
 * What went wrong, in the one spelling of every api-blocks code (UPPER_SNAKE_CASE). Stable:
 * switch on it in logs and metrics. The status and the RFC 6750 §3.1 `error` are beside each.
 *
 * @example
 * ```ts
 * const code: BearerErrorCode = 'TOKEN_EXPIRED'
 * metrics.increment(`bearer.rejected.${code}`)
 * ```
 */
export type BearerErrorCode =
  /** 401, no `error` (RFC 6750 §3.1): the request carries no bearer token (or another scheme). */
  | 'TOKEN_MISSING'
  /** 400 `invalid_request`: the Authorization field is not `Bearer <b64token>` (or is over 4 KiB). */
  | 'TOKEN_MALFORMED'
  /** 400 `invalid_request`: the URI query carries `access_token` (RFC 6750 §2.3, refused). */
  | 'TOKEN_IN_QUERY'
  /** 401 `invalid_token`: bad signature, issuer, audience, type, claims; inactive or revoked. */
  | 'TOKEN_INVALID'
  /** 401 `invalid_token`: the token's `exp` has passed (beyond the clock tolerance). */
  | 'TOKEN_EXPIRED'
  /** 403 `insufficient_scope`: the token lacks a scope the route requires. */
  | 'INSUFFICIENT_SCOPE'
  /** 503 with `Retry-After`: the introspection endpoint failed, timed out or answered badly. */
  | 'INTROSPECTION_UNAVAILABLE'
  /** 503 with `Retry-After`: the JWKS could not be fetched (timeout, status, size, JSON). */
  | 'JWKS_UNAVAILABLE'

/**
 * The error codes of RFC 6750 §3.1, as they appear in `WWW-Authenticate`.
 *
 * @example
 * ```ts
 * const error: BearerChallengeError = 'invalid_token'
 * ```
 */
export type BearerChallengeError = 'invalid_request' | 'invalid_token' | 'insufficient_scope'

/** Seconds a client should wait when the authorisation server is unreachable. */
const RETRY_AFTER_SECONDS = 5

function problemOf(
  code: BearerErrorCode,
  detail: string,
  scopes: readonly string[],
): ProblemDetails {
  switch (code) {
    case 'TOKEN_MISSING':
    case 'TOKEN_INVALID':
    case 'TOKEN_EXPIRED':
      return problems.unauthorized.create({ detail })
    case 'TOKEN_MALFORMED':
    case 'TOKEN_IN_QUERY':
      return problems.badRequest.create({ detail })
    case 'INSUFFICIENT_SCOPE':
      return problems.insufficientScope.create({ detail, required_scopes: [...scopes] })
    case 'INTROSPECTION_UNAVAILABLE':
    case 'JWKS_UNAVAILABLE':
      // The client learns that it may retry, not what failed upstream (the message says, in logs).
      return problems.serviceUnavailable.create({ detail: 'Access tokens cannot be checked now.' })
  }
}

function challengeErrorOf(code: BearerErrorCode): BearerChallengeError | undefined {
  switch (code) {
    case 'TOKEN_MALFORMED':
    case 'TOKEN_IN_QUERY':
      return 'invalid_request'
    case 'TOKEN_INVALID':
    case 'TOKEN_EXPIRED':
      return 'invalid_token'
    case 'INSUFFICIENT_SCOPE':
      return 'insufficient_scope'
    default:
      return undefined
  }
}

/**
 * Options of {@link BearerError} besides the standard `cause`.
 *
 * @example
 * ```ts
 * const options: BearerErrorOptions = { requiredScopes: ['read:orders'] }
 * ```
 */
export interface BearerErrorOptions extends ErrorOptions {
  /** For `INSUFFICIENT_SCOPE`: every scope the route requires (the challenge's `scope`). */
  requiredScopes?: readonly string[]
}

/**
 * A refused protected request. It is an `ApiBlocksError` (through `ProblemError`), so every
 * adapter answers it as its problem; `bearer()` also sends the `WWW-Authenticate` challenge of
 * RFC 6750 §3 (see `bearerChallenge`) and `headers` (`Retry-After` with a 503).
 * `instanceof` holds across duplicate installs of this package.
 *
 * @example
 * ```ts
 * try {
 *   await verifier.verify(token)
 * } catch (error) {
 *   if (error instanceof BearerError) console.log(error.code, error.challengeError) // 'TOKEN_EXPIRED' 'invalid_token'
 *   throw error
 * }
 * ```
 */
export class BearerError extends ProblemError {
  static override readonly kind: string = 'bearer.BearerError'
  /** What went wrong (see {@link BearerErrorCode}). */
  declare readonly code: BearerErrorCode
  /** The RFC 6750 §3.1 `error` of the challenge; `undefined` for a missing token and a 503. */
  readonly challengeError: BearerChallengeError | undefined
  /** For `INSUFFICIENT_SCOPE`, the scopes the route requires; otherwise empty. */
  readonly requiredScopes: readonly string[]
  /** Header fields to send with the problem: `Retry-After` with a 503. */
  readonly headers: Readonly<Record<string, string>>

  constructor(code: BearerErrorCode, detail: string, options?: BearerErrorOptions) {
    const scopes = options?.requiredScopes ?? []
    super(problemOf(code, detail, scopes), { code, cause: options?.cause })
    // The message says what happened, for logs, even where the problem says less (a 503).
    this.message = detail
    this.challengeError = challengeErrorOf(code)
    this.requiredScopes = scopes
    // RFC 9110 §10.2.3 / §15.6.4: a 503 says when to come back.
    this.headers =
      code === 'INTROSPECTION_UNAVAILABLE' || code === 'JWKS_UNAVAILABLE'
        ? { 'retry-after': String(RETRY_AFTER_SECONDS) }
        : {}
  }
}
