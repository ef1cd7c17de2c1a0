/**
 * Scopes: the `<verb>:<noun>` grammar of the API's own scopes, the four OpenID Connect scopes,
 * and the `scope` parameter (RFC 6749 §3.3: space-delimited, order does not matter).
 *
 * @module
 */
import { OAuthError } from './error.ts'
import { LIMITS } from './limits.ts'

/**
 * The OpenID Connect scopes this server knows (OIDC Core §5.4 and §11).
 *
 * @example
 * ```ts
 * OIDC_SCOPES.includes('offline_access') // true
 * ```
 */
export const OIDC_SCOPES: readonly string[] = ['openid', 'profile', 'email', 'offline_access']

const GRAMMAR = /^[a-z][a-z0-9_-]*:[a-z][a-z0-9_.-]*$/

/**
 * Whether `scope` is one this server can grant: `<verb>:<noun>` (`read:orders`) or one of
 * `openid`, `profile`, `email`, `offline_access`.
 *
 * @example
 * ```ts
 * isValidScope('read:orders') // true
 * isValidScope('admin') // false
 * ```
 */
export function isValidScope(scope: string): boolean {
  return scope.length <= 128 && (GRAMMAR.test(scope) || OIDC_SCOPES.includes(scope))
}

/**
 * Parses a `scope` parameter into distinct scopes in the order given. RFC 6749 §3.3 separates
 * them by single spaces; we also refuse empty ones, unknown grammar and more than
 * {@link LIMITS}.scopes, each as `invalid_scope`.
 *
 * @example
 * ```ts
 * parseScope('openid read:orders openid') // ['openid', 'read:orders']
 * ```
 */
export function parseScope(text: string): string[] {
  if (text.length > LIMITS.scope) {
    throw new OAuthError('invalid_scope', `The scope parameter is longer than ${LIMITS.scope}.`)
  }
  const scopes = text.split(' ')
  if (scopes.length > LIMITS.scopes) {
    throw new OAuthError('invalid_scope', `At most ${LIMITS.scopes} scopes may be asked for.`)
  }
  const seen = new Set<string>()
  for (const scope of scopes) {
    if (!isValidScope(scope)) {
      throw new OAuthError(
        'invalid_scope',
        scope === ''
          ? 'The scope parameter has an empty scope.'
          : `The scope ${JSON.stringify(scope.slice(0, 64))} is not one this server grants.`,
      )
    }
    seen.add(scope)
  }
  return [...seen]
}

/**
 * Throws `invalid_scope` unless every one of `asked` is in `allowed`.
 *
 * @example
 * ```ts
 * requireSubset(['read:orders'], client.scopes, 'this client') // throws invalid_scope if not
 * ```
 */
export function requireSubset(
  asked: readonly string[],
  allowed: readonly string[],
  what: string,
): void {
  const extra = asked.find((scope) => !allowed.includes(scope))
  if (extra !== undefined) {
    throw new OAuthError(
      'invalid_scope',
      `The scope ${JSON.stringify(extra)} is not allowed for ${what}.`,
    )
  }
}
