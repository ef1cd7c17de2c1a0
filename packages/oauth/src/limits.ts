/**
 * The length limits of every parameter the server reads from the network. A value over its
 * limit is refused with `invalid_request` (or an error page at `/authorize` before the client is
 * known), never truncated.
 *
 * @module
 */

/**
 * The limits, in characters.
 *
 * @example
 * ```ts
 * LIMITS.state // 512
 * ```
 */
export const LIMITS: {
  readonly clientId: number
  readonly clientSecret: number
  readonly redirectUri: number
  readonly state: number
  readonly nonce: number
  readonly scope: number
  readonly scopes: number
  readonly codeChallenge: number
  readonly codeVerifier: number
  readonly code: number
  readonly token: number
  readonly resource: number
  readonly authorization: number
  readonly query: number
  readonly subject: number
  readonly shortParameter: number
} = Object.freeze({
  clientId: 256,
  clientSecret: 512,
  redirectUri: 2048,
  state: 512,
  nonce: 512,
  scope: 1024,
  /** The most scopes in one `scope` parameter. */
  scopes: 50,
  codeChallenge: 128,
  codeVerifier: 128,
  code: 128,
  /** A token presented anywhere: opaque ones are 66 characters, JWTs a few hundred. */
  token: 4096,
  resource: 2048,
  /** The Authorization header field of a client's request. */
  authorization: 4096,
  /** The query of an authorization request. */
  query: 8192,
  /** A subject the host hands back from its login. */
  subject: 255,
  /** Any other parameter (`grant_type`, `response_type`, `token_type_hint`, …). */
  shortParameter: 128,
})
