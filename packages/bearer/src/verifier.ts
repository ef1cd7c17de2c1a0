/**
 * The token verifier: a JWT access token to `jwt`, anything else to `introspection`.
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'
import { createIntrospectionVerify } from './introspection.ts'
import { createJwtVerify } from './jwt.ts'
import type { BearerOptions, TokenVerifier } from './options.ts'

// RFC 7515 §7.1: a JWS in compact serialisation has three parts.
function looksLikeJwt(token: string): boolean {
  const first = token.indexOf('.')
  if (first === -1) return false
  const second = token.indexOf('.', first + 1)
  return second !== -1 && token.indexOf('.', second + 1) === -1
}

/**
 * A verifier for access tokens, checked at construction: it throws a `TypeError` or
 * `RangeError` for a configuration that could accept forged tokens (`none` or `HS*` among the
 * algorithms, a private or symmetric key, no issuer or audience) or names no way to verify.
 * `verify()` answers the token's {@link Principal} or throws a `BearerError`
 * (`TOKEN_INVALID`, `TOKEN_EXPIRED`, `JWKS_UNAVAILABLE`, `INTROSPECTION_UNAVAILABLE`).
 *
 * With both `jwt` and `introspection`, a token of three dot-separated parts is verified as a
 * JWT and any other is introspected; with one of them, every token goes there.
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
