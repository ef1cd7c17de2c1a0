/**
 * The principal of verified token claims, the same for a JWT access token and an
 * introspection answer (both use the JWT claim names, RFC 9068 §2.2 and RFC 7662 §2.2).
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'

/**
 * @internal The principal of `claims`, already verified. `subject` is the `sub` when the token
 * speaks for a user: it has a `username`, or its `sub` is not its `client_id` (for client
 * credentials RFC 9068 §2.2 makes `sub` the client's id, and there is no user).
 */
export function principalFromClaims(claims: Readonly<Record<string, unknown>>): Principal {
  const sub = typeof claims['sub'] === 'string' ? claims['sub'] : undefined
  const clientId = typeof claims['client_id'] === 'string' ? claims['client_id'] : undefined
  const user = claims['username'] !== undefined || sub !== clientId
  const { active: _active, ...rest } = claims
  return {
    subject: user ? sub : undefined,
    clientId,
    scopes: scopesOf(claims['scope']),
    claims: Object.freeze(rest),
    tokenId: typeof claims['jti'] === 'string' ? claims['jti'] : undefined,
  }
}

// RFC 6749 §3.3 / RFC 9068 §2.2.3: scopes are one space-separated string.
function scopesOf(scope: unknown): string[] {
  if (typeof scope !== 'string') return []
  return scope.split(' ').filter((part) => part !== '')
}
