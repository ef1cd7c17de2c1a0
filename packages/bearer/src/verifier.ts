/**
 * The token verifier: a JWT access token to `jwt`, anything else to `introspection`.
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'
import { decodeBase64url } from '@api-blocks/core'
import { createIntrospectionVerify } from './introspection.ts'
import { createJwtVerify } from './jwt.ts'
import type { BearerOptions, TokenVerifier } from './options.ts'

// The longest JOSE header looked at when routing a token: a real one (alg, kid, typ) is under
// 200 characters.
const MAX_HEADER_LENGTH = 1024

/**
 * @internal Whether `token` is a JWS (RFC 7515 §7.1): three dot-separated parts, the first a
 * base64url JSON object with a string `alg` (§4.1.1). An opaque token may have two dots too
 * (RFC 6750 §2.1's example `mF_9.B5f-4.1JqM`), so the count of parts alone does not decide.
 */
function looksLikeJwt(token: string): boolean {
  const first = token.indexOf('.')
  if (first === -1 || first > MAX_HEADER_LENGTH) return false
  const second = token.indexOf('.', first + 1)
  if (second === -1 || token.indexOf('.', second + 1) !== -1) return false
  const bytes = decodeBase64url(token.slice(0, first))
  if (bytes === undefined) return false
  let header: unknown
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    return false
  }
  return (
    typeof header === 'object' &&
    header !== null &&
    !Array.isArray(header) &&
    typeof (header as Record<string, unknown>)['alg'] === 'string'
  )
}

/**
 * A verifier for access tokens, checked at construction: it throws a `TypeError` or
 * `RangeError` for a configuration that could accept forged tokens (`none` or `HS*` among the
 * algorithms, a private or symmetric key, no issuer or audience) or names no way to verify.
 * `verify()` answers the token's {@link Principal} or throws a `BearerError`
 * (`TOKEN_INVALID`, `TOKEN_EXPIRED`, `JWKS_UNAVAILABLE`, `INTROSPECTION_UNAVAILABLE`).
 *
 * With both `jwt` and `introspection`, a token that is a JWS (three dot-separated parts, the
 * first a base64url JSON object with a string `alg`) is verified as a JWT and any other is
 * introspected; with one of them, every token goes there.
 *
 * The principal's `subject` is the token's `sub` unless the token is the client's own (client
 * credentials: no `username` and `sub` equal to `client_id`, RFC 9068 §2.2). The authorisation
 * server must therefore issue user subjects that can never equal a client id: a user whose
 * `sub` is a client's id is taken for that client (one rate-limit bucket, one idempotency
 * scope).
 *
 * @example
 * ```ts
 * import { createTokenVerifier } from '@api-blocks/bearer'
 *
 * const verifier = createTokenVerifier({
 *   jwt: {
 *     issuer: 'https://auth.example.com',
 *     audience: 'https://api.example.com',
 *     jwksUrl: 'https://auth.example.com/.well-known/jwks.json',
 *   },
 * })
 * const principal = await verifier.verify(token) // { subject, clientId, scopes, claims, tokenId }
 * ```
 */
export function createTokenVerifier(options: BearerOptions): TokenVerifier {
  const clock = options.clock ?? Date.now
  if (options.jwt === undefined && options.introspection === undefined) {
    throw new TypeError('A token verifier needs jwt or introspection options')
  }
  const jwt = options.jwt === undefined ? undefined : createJwtVerify(options.jwt, clock)
  const introspect =
    options.introspection === undefined
      ? undefined
      : createIntrospectionVerify(options.introspection, clock)
  return {
    verify(token: string): Promise<Principal> {
      if (jwt === undefined) return introspect!(token)
      if (introspect === undefined || looksLikeJwt(token)) return jwt(token)
      return introspect(token)
    },
  }
}
