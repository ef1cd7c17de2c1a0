/**
 * JWT access tokens (RFC 9068) verified with jose's `jwtVerify`: pinned algorithms, the
 * `at+jwt` type, issuer, audience, the time claims with a small tolerance, and every claim
 * RFC 9068 §2.2 requires.
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'
import type { JWTPayload, JWTVerifyGetKey } from 'jose'
import { errors, jwtVerify } from 'jose'
import { BearerError } from './error.ts'
import { checkAlgorithms } from './internal/algorithms.ts'
import { keyResolver } from './internal/keys.ts'
import { principalFromClaims } from './internal/principal.ts'
import type { JwtVerificationOptions } from './options.ts'

// RFC 9068 §2.2: the claims every JWT access token carries.
const REQUIRED_CLAIMS = ['iss', 'exp', 'aud', 'sub', 'iat', 'jti', 'client_id']

/** @internal Verifies one token: the principal, or a BearerError. */
export type JwtVerify = (token: string) => Promise<Principal>

function invalid(description: string, cause?: unknown): BearerError {
  return new BearerError('TOKEN_INVALID', description, { cause })
}

// jose's errors, described without echoing anything of the token.
function refusal(error: unknown): BearerError {
  if (error instanceof BearerError) return error
  if (!(error instanceof errors.JOSEError)) {
    return invalid('The access token is malformed.', error)
  }
  switch (error.code) {
    case 'ERR_JWT_EXPIRED':
      return new BearerError('TOKEN_EXPIRED', 'The access token expired.', { cause: error })
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      const { claim, reason } = error as errors.JWTClaimValidationFailed
      if (claim === 'typ') return invalid('The access token is not of type at+jwt.', error)
      if (claim === 'nbf' && reason === 'check_failed') {
        return invalid('The access token is not valid yet.', error)
      }
      return reason === 'missing'
        ? invalid(`The access token has no ${claim} claim.`, error)
        : invalid(`The access token's ${claim} claim is not accepted.`, error)
    }
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return invalid('The access token is signed with an algorithm that is not accepted.', error)
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return invalid("The access token's signature is not valid.", error)
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return invalid('The access token is signed with an unknown key.', error)
    default:
      return invalid('The access token is malformed.', error)
  }
}

// How many keys of the set a token without `kid` is tried against.
const MAX_CANDIDATE_KEYS = 5

type VerifyOptions = Parameters<typeof jwtVerify>[2]

/**
 * The payload of `token`, verified. A token without `kid` (RFC 7515 §4.1.4: optional) matches
 * every key of its algorithm; jose then throws an error that lists them, and each is tried in
 * turn, at most {@link MAX_CANDIDATE_KEYS} of them, so that a rotation list of two keys works.
 */
async function verifyWithCandidates(
  token: string,
  getKey: JWTVerifyGetKey,
  options: VerifyOptions,
): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, getKey, options)).payload
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error
    let tried = 0
    for await (const key of error) {
      if (tried++ === MAX_CANDIDATE_KEYS) break
      try {
        return (await jwtVerify(token, key, options)).payload
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner
      }
    }
    throw new errors.JWSSignatureVerificationFailed()
  }
}

// RFC 9068 §2.2 types the claims jose leaves alone.
function checkClaims(payload: JWTPayload, now: number, toleranceSeconds: number): void {
  for (const claim of ['sub', 'jti', 'client_id'] as const) {
    if (typeof payload[claim] !== 'string' || payload[claim] === '') {
      throw invalid(`The access token's ${claim} claim is not a string.`)
    }
  }
  if (payload['scope'] !== undefined && typeof payload['scope'] !== 'string') {
    throw invalid("The access token's scope claim is not a string.")
  }
  // jose checks `iat` only against a maximum age; a token issued in the future is refused too.
  if ((payload.iat as number) > Math.floor(now / 1000) + toleranceSeconds) {
    throw invalid('The access token is issued in the future.')
  }
  // RFC 9449 §7.1, RFC 8705 §3: a sender-constrained token counts only with a proof of its
  // key, which a Bearer request cannot carry.
  if (payload['cnf'] !== undefined) {
    throw invalid('The access token is bound to a key and is not a bearer token.')
  }
}

/**
 * @internal The verifier of `options`, checked at once: throws a TypeError or RangeError for
 * `none`, an HS* algorithm, a missing issuer or audience, a private or symmetric key.
 */
export function createJwtVerify(options: JwtVerificationOptions, clock: () => number): JwtVerify {
  if (typeof options.issuer !== 'string' || options.issuer === '') {
    throw new TypeError('jwt.issuer is required')
  }
  const audience = typeof options.audience === 'string' ? [options.audience] : options.audience
  if (!Array.isArray(audience) || audience.length === 0 || audience.some((aud) => aud === '')) {
    throw new TypeError('jwt.audience is required')
  }
  const tolerance = options.clockToleranceSeconds ?? 30
  if (!Number.isInteger(tolerance) || tolerance < 0 || tolerance > 300) {
    throw new RangeError('jwt.clockToleranceSeconds is a whole number of 0 to 300')
  }
  const algorithms = checkAlgorithms(options.algorithms)
  const typ = options.typ ?? 'at+jwt'
  if (typ !== 'at+jwt' && typ !== 'application/at+jwt') {
    throw new TypeError(`jwt.typ must be at+jwt or application/at+jwt (RFC 9068 §4), got ${typ}`)
  }
  const getKey = keyResolver(options, clock)
  const verifyOptions = {
    algorithms,
    issuer: options.issuer,
    audience: [...audience],
    // RFC 9068 §4: `typ` must be at+jwt; jose compares it case-insensitively and without an
    // `application/` prefix (RFC 7515 §4.1.9).
    typ,
    clockTolerance: tolerance,
    requiredClaims: REQUIRED_CLAIMS,
  }
  return async (token) => {
    const now = clock()
    let payload: JWTPayload
    try {
      const options = { ...verifyOptions, currentDate: new Date(now) }
      payload = await verifyWithCandidates(token, getKey, options)
    } catch (error) {
      throw refusal(error)
    }
    checkClaims(payload, now, tolerance)
    // jose parses the payload afresh for every verification: no one else holds it, so it is
    // frozen in place rather than copied.
    return principalFromClaims(payload, true)
  }
}
