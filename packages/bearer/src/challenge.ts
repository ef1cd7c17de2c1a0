/**
 * The `WWW-Authenticate: Bearer` challenge of RFC 6750 §3, with its auth-params quoted and
 * escaped so that no value can break out of its quotes or inject a parameter.
 *
 * @module
 */
import type { BearerChallengeError, BearerError } from './error.ts'

/**
 * The parts of a Bearer challenge (RFC 6750 §3).
 *
 * @example
 * ```ts
 * const challenge: BearerChallenge = { realm: 'orders', error: 'insufficient_scope', scope: ['read:orders'] }
 * ```
 */
export interface BearerChallenge {
  /** The protection space (RFC 9110 §11.5); printable ASCII. */
  realm?: string | undefined
  /** The RFC 6750 §3.1 error code; absent when the request carried no token at all. */
  error?: BearerChallengeError | undefined
  /** A human-readable explanation, for developers. */
  errorDescription?: string | undefined
  /** The scopes needed (RFC 6750 §3 `scope`): scope tokens (RFC 6749 §3.3). */
  scope?: readonly string[] | undefined
}

// RFC 9110 §5.6.4 quoted-string, limited to ASCII: what a realm may hold once escaped.
const REALM = /^[\t\x20-\x7e]*$/
// RFC 6750 §3: error_description and scope values hold %x20-21 / %x23-5B / %x5D-7E only.
const NOT_RFC6750_VALUE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/g
// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

/**
 * Whether `value` is a scope token of RFC 6749 §3.3 (no space, quote or backslash).
 *
 * @example
 * ```ts
 * isScopeToken('read:orders') // true
 * isScopeToken('read orders') // false
 * ```
 */
export function isScopeToken(value: string): boolean {
  return SCOPE_TOKEN.test(value)
}

/**
 * Checks a realm given in configuration: printable ASCII (and tabs), so it can be quoted.
 *
 * @internal
 */
export function checkRealm(realm: string): string {
  if (!REALM.test(realm)) {
    throw new RangeError('A realm is printable ASCII (RFC 9110 §5.6.4 quoted-string)')
  }
  return realm
}

// RFC 9110 §5.6.4: a quoted-pair escapes DQUOTE and backslash inside a quoted-string.
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`
}

/**
 * The value of a `WWW-Authenticate` field for `challenge`: `Bearer` followed by the realm,
 * error, error_description and scope parameters that are present, in that order
 * (RFC 6750 §3). Characters an error description may not hold are replaced, never escaped
 * (RFC 6750 §3 allows no quoted-pair there).
 *
 * @example
 * ```ts
 * formatBearerChallenge({ realm: 'api', error: 'invalid_token', errorDescription: 'The access token expired.' })
 * // 'Bearer realm="api", error="invalid_token", error_description="The access token expired."'
 * ```
 */
export function formatBearerChallenge(challenge: BearerChallenge): string {
  const params: string[] = []
  if (challenge.realm !== undefined) params.push(`realm=${quoted(checkRealm(challenge.realm))}`)
  if (challenge.error !== undefined) params.push(`error=${quoted(challenge.error)}`)
  if (challenge.errorDescription !== undefined) {
    const text = challenge.errorDescription
      .replace(/"/g, "'")
      .replace(/\\/g, '/')
      .replace(NOT_RFC6750_VALUE, '?')
    params.push(`error_description=${quoted(text)}`)
  }
  if (challenge.scope !== undefined && challenge.scope.length > 0) {
    for (const scope of challenge.scope) {
      if (!isScopeToken(scope)) throw new RangeError(`Not a scope token (RFC 6749 §3.3): ${scope}`)
    }
    params.push(`scope=${quoted(challenge.scope.join(' '))}`)
  }
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`
}

/**
 * The `WWW-Authenticate` value that goes with a refusal: the realm and, unless the request
 * carried no token (RFC 6750 §3.1: no `error` then), the error, its description and, for
 * `insufficient_scope`, the scopes needed. `undefined` for a 503, which is no challenge.
 *
 * @example
 * ```ts
 * try {
 *   principal = await verifier.verify(token)
 * } catch (error) {
 *   if (!(error instanceof BearerError)) throw error
 *   const challenge = bearerChallenge(error, 'orders')
 *   if (challenge !== undefined) headers.set('www-authenticate', challenge)
 * }
 * ```
 */
export function bearerChallenge(error: BearerError, realm?: string): string | undefined {
  if (error.code === 'INTROSPECTION_UNAVAILABLE' || error.code === 'JWKS_UNAVAILABLE') {
    return undefined
  }
  if (error.challengeError === undefined) return formatBearerChallenge({ realm })
  return formatBearerChallenge({
    realm,
    error: error.challengeError,
    errorDescription: error.message,
    scope: error.challengeError === 'insufficient_scope' ? error.requiredScopes : undefined,
  })
}
