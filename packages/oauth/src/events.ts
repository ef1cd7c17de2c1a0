/**
 * What the server tells its observer (`onEvent`): never a token, a code or a secret, only ids.
 *
 * @module
 */

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
  readonly clientId?: string | undefined
  readonly familyId?: string | undefined
  readonly subject?: string | undefined
  readonly grantType?: string | undefined
}
