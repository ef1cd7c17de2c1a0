/**
 * The one error class of @api-blocks/oauth, and the RFC 6749 §5.2 error response it answers
 * with at the token, introspection and revocation endpoints.
 *
 * OAuth clients (oauth4webapi, openid-client) read `{ "error", "error_description" }` as
 * `application/json`; a problem+json body would make them throw, so these endpoints answer the
 * OAuth shape, and {@link OAuthError.toProblem} is only for a host that rethrows the error.
 *
 * @module
 */
import { ApiBlocksError, type ProblemDetails } from '@api-blocks/core'

/**
 * The error codes of RFC 6749 §4.1.2.1 and §5.2, RFC 7009 §2.2.1, RFC 8707 §2 and OpenID
 * Connect Core §3.1.2.6, as they appear on the wire.
 *
 * @example
 * ```ts
 * const wire: OAuthErrorWireCode = 'invalid_grant'
 * ```
 */
export type OAuthErrorWireCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_response_type'
  | 'access_denied'
  | 'invalid_target'
  | 'unsupported_token_type'
  | 'login_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'server_error'
  | 'temporarily_unavailable'

/**
 * The stable code of an {@link OAuthError}: the wire code in UPPER_SNAKE_CASE
 * (`invalid_grant` is `INVALID_GRANT`). Log and count by it.
 *
 * @example
 * ```ts
 * const code: OAuthErrorCode = 'INVALID_GRANT'
 * ```
 */
export type OAuthErrorCode = Uppercase<OAuthErrorWireCode>

// RFC 6749 §5.2: 400 for everything but invalid_client (401); a server fault is a 500.
const STATUS: Partial<Record<OAuthErrorWireCode, number>> = {
  invalid_client: 401,
  server_error: 500,
  temporarily_unavailable: 503,
}

/**
 * A refused OAuth request. `error` is the RFC 6749 code the client receives, `code` its
 * UPPER_SNAKE_CASE spelling, `message` the `error_description` (never a secret or a token).
 *
 * @example
 * ```ts
 * const error = new OAuthError('invalid_grant', 'The authorization code is expired or unknown.')
 * error.code // 'INVALID_GRANT'
 * error.status // 400
 * ```
 */
export class OAuthError extends ApiBlocksError<OAuthErrorCode> {
  static override readonly kind: string = 'oauth.OAuthError'
  /** The code on the wire, as RFC 6749 spells it. */
  readonly error: OAuthErrorWireCode

  constructor(error: OAuthErrorWireCode, description: string, options?: ErrorOptions) {
    super(error.toUpperCase() as OAuthErrorCode, description, {
      ...options,
      status: STATUS[error] ?? 400,
    })
    this.error = error
  }

  /** The RFC 6749 §5.2 body: `{ error, error_description }`. */
  toJSON(): { error: OAuthErrorWireCode; error_description: string } {
    return { error: this.error, error_description: this.message }
  }

  override toProblem(): ProblemDetails {
    const problem = super.toProblem()
    problem['error'] = this.error
    return problem
  }
}
