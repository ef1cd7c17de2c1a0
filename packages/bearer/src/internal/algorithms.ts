/**
 * The signature algorithms a verifier may be pinned to.
 *
 * @module
 */

// RFC 7518 §3.1 and RFC 8037 §3.1 (EdDSA), RFC 9864 (Ed25519): the asymmetric JWS algorithms.
// RFC 9068 §2.1 makes RS256 the one every resource server must be able to accept.
const ASYMMETRIC: ReadonlySet<string> = new Set([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
])

/**
 * @internal The algorithms of the configuration, checked: asymmetric only. `none` (RFC 7519
 * §6) would accept unsigned tokens, and an `HS*` algorithm would let anyone holding the public
 * key (which is public) forge tokens (RFC 8725 §2.1, §3.1); both are refused at construction.
 */
export function checkAlgorithms(algorithms: readonly string[] | undefined): string[] {
  const list = [...(algorithms ?? ['ES256'])]
  if (list.length === 0) throw new RangeError('jwt.algorithms must name at least one algorithm')
  for (const alg of list) {
    if (!ASYMMETRIC.has(alg)) {
      throw new RangeError(
        alg.toLowerCase() === 'none' || alg.startsWith('HS')
          ? `jwt.algorithms must not contain ${alg}: only asymmetric signatures are accepted (RFC 8725 §3.1)`
          : `jwt.algorithms: unknown or unsupported algorithm ${alg}`,
      )
    }
  }
  return list
}
