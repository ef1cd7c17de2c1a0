/**
 * The refresh token grant (RFC 6749 §6) with rotation and reuse detection (RFC 9700 §4.14.2):
 * every use replaces the refresh token through the store's atomic compare-and-set; a replaced
 * token presented again revokes its whole family, unless it comes back within the optional
 * grace window (two tabs racing), which refuses it and revokes nothing.
 *
 * @module
 */
import type { OAuthClient } from './clients.ts'
import type { ServerContext } from './context.ts'
import { OAuthError } from './error.ts'
import { type Parameters, parameter } from './form.ts'
import { mintAccessToken, mintRefreshToken, tokenResponse } from './issue.ts'
import { LIMITS } from './limits.ts'
import { parseScope, requireSubset } from './scope.ts'
import { familyOfOpaqueToken } from './tokens.ts'

const INVALID = 'The refresh token is invalid, expired or revoked.'

/**
 * `grant_type=refresh_token`.
 *
 * @example
 * ```ts
 * return refreshTokenGrant(context, client, form) // 200 { access_token, refresh_token, … }
 * ```
 */
export async function refreshTokenGrant(
  context: ServerContext,
  client: OAuthClient,
  form: Parameters,
): Promise<Response> {
  const token = parameter(form, 'refresh_token', LIMITS.token)
  if (token === undefined)
    throw new OAuthError('invalid_request', 'The refresh_token parameter is missing.')
  const scopeText = parameter(form, 'scope', LIMITS.scope)
  const asked = scopeText === undefined ? undefined : parseScope(scopeText)
  const familyId = familyOfOpaqueToken(token)
  if (familyId === undefined) throw new OAuthError('invalid_grant', INVALID)
  const { clock, refreshReuseGraceMs, onEvent } = context.options
  const now = clock()
  const tokenHash = await context.hash(token)
  const active = await context.store.findToken(familyId, tokenHash, now)
  if (active === undefined) {
    // Not active: unknown, expired, revoked, or rotated before. Only the store can tell a
    // rotated one, and presenting it again is what reuse detection is for.
    const result = await context.store.rotateRefresh(familyId, tokenHash, [], now, {
      graceMs: refreshReuseGraceMs,
    })
    if (result.state === 'reused') {
      onEvent({
        type: 'refresh_token_reused',
        code: 'INVALID_GRANT',
        clientId: result.family.clientId,
        familyId,
      })
    }
    throw new OAuthError('invalid_grant', INVALID)
  }
  const { token: record, family } = active
  // RFC 6749 §6: the refresh token was issued to this client.
  if (record.kind !== 'refresh_token' || family.clientId !== client.id) {
    throw new OAuthError('invalid_grant', INVALID)
  }
  // RFC 8707 §2.2: the grant's resource, no other.
  const resource = parameter(form, 'resource', LIMITS.resource)
  if (resource !== undefined && resource !== family.resource) {
    throw new OAuthError('invalid_target', 'The resource is not the one authorized.')
  }
  // RFC 6749 §6: the scope may narrow what the grant holds, never widen it ("MUST NOT include
  // any scope not originally granted"); omitted, it is the grant's. The access token carries
  // the scopes asked; the new refresh token keeps the presented one's ("MUST be identical").
  if (asked !== undefined) requireSubset(asked, family.scopes, 'this grant')
  const accessScopes =
    asked === undefined ? undefined : family.scopes.filter((scope) => asked.includes(scope))
  if (accessScopes !== undefined && accessScopes.length === 0) {
    throw new OAuthError('invalid_scope', 'The scope parameter names no scope.')
  }
  const access = await mintAccessToken(context, family, now, accessScopes)
  const next = await mintRefreshToken(context, family, now, record.scopes)
  const result = await context.store.rotateRefresh(
    familyId,
    tokenHash,
    [access.record, next.record],
    now,
    { graceMs: refreshReuseGraceMs },
  )
  switch (result.state) {
    case 'rotated':
      onEvent({
        type: 'refresh_token_rotated',
        clientId: client.id,
        familyId,
        subject: family.subject,
      })
      return tokenResponse(access, family, now, { refreshToken: next.token })
    case 'reused':
      // Another request rotated it between our read and our write: the store revoked the
      // family (the race is exactly what reuse detection cannot tell from theft).
      onEvent({
        type: 'refresh_token_reused',
        code: 'INVALID_GRANT',
        clientId: client.id,
        familyId,
      })
      throw new OAuthError('invalid_grant', INVALID)
    default:
      throw new OAuthError('invalid_grant', INVALID)
  }
}
