/**
 * The principal of verified token claims, the same for a JWT access token and an
 * introspection answer (both use the JWT claim names, RFC 9068 §2.2 and RFC 7662 §2.2).
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'

/**
 * @internal The principal of `claims`, already verified (a string `sub` included). `subject`
 * is the `sub` when the token speaks for a user: it has a `username`, or its `sub` is not its
 * `client_id` (for client credentials RFC 9068 §2.2 makes `sub` the client's id, and there is
 * no user). A user whose `sub` equals a client id is therefore taken for that client: the
 * authorisation server must issue subjects that can never equal a client id.
 *
 * The principal's claims are deep-frozen: the introspection cache hands the same principal to
 * every request with the token, so no request may change what the next one sees, nested claims
 * included. By default they are a copy (`structuredClone`), since the caller may still hold
 * `claims`; with `owned`, for claims no one else holds (a JWT payload, which jose parses afresh
 * for every verification), `claims` and the objects under it are frozen in place instead: the
 * copy cost 2.5–4 µs per token in `npm run bench -- bearer` (docs/benchmarks.md, issue 14).
 */
export function principalFromClaims(
  claims: Readonly<Record<string, unknown>>,
  owned = false,
): Principal {
  const sub = typeof claims['sub'] === 'string' ? claims['sub'] : undefined
  const clientId = typeof claims['client_id'] === 'string' ? claims['client_id'] : undefined
  const user = claims['username'] !== undefined || sub !== clientId
  const { active: _active, ...rest } = claims
  return Object.freeze({
    subject: user ? sub : undefined,
    clientId,
    scopes: Object.freeze(scopesOf(claims['scope'])),
    claims: deepFreeze(owned ? rest : structuredClone(rest)),
    tokenId: typeof claims['jti'] === 'string' ? claims['jti'] : undefined,
  })
}

// Freezes `value` and every object under it (a frozen object is not walked again, so a cycle
// ends the walk).
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  Object.freeze(value)
  for (const member of Object.values(value)) deepFreeze(member)
  return value
}

// RFC 6749 §3.3 / RFC 9068 §2.2.3: scopes are one space-separated string.
function scopesOf(scope: unknown): string[] {
  if (typeof scope !== 'string') return []
  return scope.split(' ').filter((part) => part !== '')
}
