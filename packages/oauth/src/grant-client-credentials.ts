/**
 * The client credentials grant (RFC 6749 §4.4): a confidential client acting for itself. Each
 * request makes its own family (so each token is revoked alone), with no refresh token
 * (RFC 6749 §4.4.3) and the client id as `sub` (RFC 9068 §2.2).
 *
 * @module
 */
import { isConfidential, type OAuthClient } from './clients.ts'
import type { ServerContext } from './context.ts'
import { OAuthError } from './error.ts'
import { type Parameters, parameter } from './form.ts'
import { mintAccessToken, tokenResponse } from './issue.ts'
import { LIMITS } from './limits.ts'
import { OIDC_SCOPES, parseScope, requireSubset } from './scope.ts'
import type { FamilyRecord } from './store.ts'
import { randomId } from './tokens.ts'

/**
 * `grant_type=client_credentials`.
 *
 * @example
 * ```ts
 * return clientCredentialsGrant(context, client, form) // 200 { access_token, … }
 * ```
 */
export async function clientCredentialsGrant(
  context: ServerContext,
  client: OAuthClient,
  form: Parameters,
): Promise<Response> {
  // RFC 6749 §4.4.2: only confidential clients.
  if (!isConfidential(client)) {
    throw new OAuthError('unauthorized_client', 'A public client cannot use client credentials.')
  }
  const apiScopes = client.scopes.filter((scope) => !OIDC_SCOPES.includes(scope))
  const scopeText = parameter(form, 'scope', LIMITS.scope)
  // RFC 6749 §3.3: without a scope, the client's whole (non-OpenID) allowance.
  const scopes = scopeText === undefined ? apiScopes : parseScope(scopeText)
  // The OpenID scopes describe a user; a client acting for itself has none.
  requireSubset(scopes, apiScopes, 'this client with client credentials')
  const resourceText = parameter(form, 'resource', LIMITS.resource)
  const { resources, clock, random, onEvent } = context.options
  const resource =
    resourceText === undefined
      ? resources[0]!
      : resources.find((r) => r.identifier === resourceText)
  if (resource === undefined) {
    throw new OAuthError('invalid_target', 'The resource is not one this server issues tokens for.')
  }
  const now = clock()
  const family: FamilyRecord = {
    id: randomId(random),
    clientId: client.id,
    subject: undefined,
    scopes,
    resource: resource.identifier,
    createdAt: now,
    expiresAt: now + resource.accessTokenTtlSeconds * 1000,
  }
  const access = await mintAccessToken(context, family, now)
  if ((await context.store.issue(family, [access.record], now)) === 'revoked') {
    throw new OAuthError('server_error', 'The new grant was revoked before it was issued.')
  }
  onEvent({
    type: 'token_issued',
    grantType: 'client_credentials',
    clientId: client.id,
    familyId: family.id,
  })
  return tokenResponse(access, family, now, {})
}
