/**
 * What the server tells its observer (`onEvent`): never a token, a code or a secret, only ids.
 *
 * @module
 */
import type { OAuthErrorCode } from './error.ts'

/**
 * One thing that happened.
 *
 * - `token_issued`: tokens were issued (`grantType` says by which grant).
 * - `refresh_token_rotated`: a refresh token was used and replaced.
 * - `refresh_token_reused`: a rotated refresh token came back: its whole family is revoked
 *   (RFC 9700 §4.14.2). Usually a stolen token, sometimes two tabs refreshing at once.
 * - `code_replayed`: a consumed code came back: what it issued is revoked (RFC 6749 §4.1.2).
 * - `client_authentication_failed`: `clientId` is what the client claimed, if anything.
 * - `token_revoked`: through the revocation endpoint.
 * - `authorization_denied`: the user refused consent (`denyInteraction`).
 * - `server_error`: an endpoint failed (the store, most likely) and answered 500
 *   `server_error`; `error` is what was thrown (the response says nothing of it).
 * - `client_config_invalid`: a custom client registry returned a client that breaks the rules
 *   of `staticClients` (`error` says which); it was treated as unknown.
 * - `interaction_store_full`: `/authorize` answered 503 because the store holds as many
 *   interactions as it may.
 *
 * @example
 * ```ts
 * const onEvent = (event: OAuthEvent) => {
 *   if (event.type === 'refresh_token_reused') logger.warn(event, 'refresh token reuse: family revoked')
 * }
 * ```
 */
export interface OAuthEvent {
  readonly type:
    | 'token_issued'
    | 'refresh_token_rotated'
    | 'refresh_token_reused'
    | 'code_replayed'
    | 'client_authentication_failed'
    | 'token_revoked'
    | 'authorization_denied'
    | 'server_error'
    | 'client_config_invalid'
    | 'interaction_store_full'
  /**
   * For the events of a refusal, the code of the error the client got (`INVALID_GRANT` for a
   * reuse or a replay, `INVALID_CLIENT`, `ACCESS_DENIED`, `SERVER_ERROR`): the one spelling logs
   * and metrics share with {@link OAuthError}.
   */
  readonly code?: OAuthErrorCode | undefined
  readonly clientId?: string | undefined
  readonly familyId?: string | undefined
  readonly subject?: string | undefined
  readonly grantType?: string | undefined
  /** For `server_error`: what the endpoint threw. */
  readonly error?: unknown
}
