/**
 * The end user as the host application describes it: the subject and the claims the ID token
 * and introspection carry.
 *
 * @module
 */

/**
 * An end user, as `findAccount` returns it. `claims` holds the OpenID Connect standard claims
 * (OIDC Core §5.1): `profile` releases `name`, `given_name`, `family_name`,
 * `preferred_username` and the others of §5.4; `email` releases `email` and `email_verified`.
 *
 * @example
 * ```ts
 * const ada: Account = {
 *   subject: 'user-1',
 *   username: 'ada',
 *   claims: { name: 'Ada Lovelace', email: 'ada@example.com', email_verified: true },
 * }
 * ```
 */
export interface Account {
  readonly subject: string
  /** The name the user signs in with: introspection's `username` (RFC 7662 §2.2). */
  readonly username?: string | undefined
  readonly claims?: Readonly<Record<string, unknown>> | undefined
}

// OIDC Core §5.4: the claims each scope releases.
const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: [
    'name',
    'family_name',
    'given_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'updated_at',
  ],
  email: ['email', 'email_verified'],
}

/**
 * Every claim a scope can release, for discovery's `claims_supported`.
 *
 * @example
 * ```ts
 * RELEASABLE_CLAIMS.includes('email_verified') // true
 * ```
 */
export const RELEASABLE_CLAIMS: readonly string[] = Object.values(SCOPE_CLAIMS).flat()

/**
 * The claims of `account` that `scopes` release (OIDC Core §5.4), never `sub` or another
 * registered JWT claim.
 *
 * @example
 * ```ts
 * releasedClaims({ subject: 'u', claims: { name: 'Ada', email: 'a@x' } }, ['email']) // { email: 'a@x' }
 * ```
 */
export function releasedClaims(
  account: Account | undefined,
  scopes: readonly string[],
): Record<string, unknown> {
  const released: Record<string, unknown> = {}
  const claims = account?.claims
  if (claims === undefined) return released
  for (const scope of scopes) {
    for (const name of SCOPE_CLAIMS[scope] ?? []) {
      if (Object.hasOwn(claims, name) && claims[name] !== undefined) released[name] = claims[name]
    }
  }
  return released
}
