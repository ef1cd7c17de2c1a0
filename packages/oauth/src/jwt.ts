/**
 * The JWTs the server signs: ID tokens (OpenID Connect Core §2) and JWT access tokens
 * (RFC 9068), and the check of its own JWT access tokens for introspection and revocation.
 *
 * @module
 */
import { jwtVerify, SignJWT } from 'jose'
import type { KeySet } from './keys.ts'

/**
 * Signs `claims` with the set's signing key, `typ` in the header (`JWT` or `at+jwt`).
 *
 * @example
 * ```ts
 * const jwt = await signJwt(keys, 'at+jwt', { iss, sub, aud, exp, iat, jti, client_id })
 * ```
 */
export function signJwt(
  keys: KeySet,
  typ: 'JWT' | 'at+jwt',
  claims: Record<string, unknown>,
): Promise<string> {
  const { signing } = keys
  return new SignJWT(claims)
    .setProtectedHeader({ alg: signing.alg, kid: signing.kid, typ })
    .sign(signing.privateKey)
}

/**
 * The claims of a JWT access token this server signed.
 *
 * @example
 * ```ts
 * const claims: AccessTokenClaims | undefined = await verifyOwnAccessToken(keys, issuer, token, now)
 * ```
 */
export interface AccessTokenClaims {
  readonly jti: string
  readonly client_id: string
  readonly exp: number
}

/**
 * The claims of `token` when it is a JWT access token this server signed with one of its keys
 * (`typ` `at+jwt`, RFC 9068 §4; `iss` this issuer) and not expired at `now`; else
 * `undefined`. Its store record still decides whether it is active.
 *
 * @example
 * ```ts
 * const claims = await verifyOwnAccessToken(keys, issuer, token, Date.now())
 * ```
 */
export async function verifyOwnAccessToken(
  keys: KeySet,
  issuer: string,
  token: string,
  now: number,
): Promise<AccessTokenClaims | undefined> {
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = header.kid === undefined ? undefined : keys.byKid.get(header.kid)
        if (key === undefined || key.alg !== header.alg) throw new Error('unknown key')
        return key.publicKey
      },
      {
        algorithms: [...keys.algorithms],
        typ: 'at+jwt',
        issuer,
        currentDate: new Date(now),
        clockTolerance: 0,
        requiredClaims: ['jti', 'client_id', 'exp', 'iat', 'sub', 'aud'],
      },
    )
    const { jti, client_id: clientId, exp } = payload as Record<string, unknown>
    if (typeof jti !== 'string' || typeof clientId !== 'string' || typeof exp !== 'number') {
      return undefined
    }
    return { jti, client_id: clientId, exp }
  } catch {
    return undefined
  }
}
