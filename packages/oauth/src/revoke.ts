/**
 * Token revocation (RFC 7009): a client revokes its own token. A refresh token revokes its
 * whole family, an access token only itself. The answer is 200 whatever the token was (RFC
 * 7009 §2.2: an invalid token is no error), including another client's, which is left alone.
 *
 * @module
 */
import { authenticateClient } from './client-auth.ts'
import type { ServerContext } from './context.ts'
import { OAuthError } from './error.ts'
import { parameter, readForm } from './form.ts'
import { LIMITS } from './limits.ts'
import { findActiveToken } from './lookup.ts'
import { oauthErrorResponse } from './responses.ts'
import { methodNotAllowed } from './token-endpoint.ts'

/**
 * `POST /oauth/revoke`.
 *
 * @example
 * ```ts
 * const response = await handleRevoke(context, request) // 200, whatever the token
 * ```
 */
export async function handleRevoke(context: ServerContext, request: Request): Promise<Response> {
  if (request.method !== 'POST') return methodNotAllowed('POST')
  const { issuer, clients, maxFormBytes, onEvent, clock } = context.options
  try {
    const form = await readForm(request, maxFormBytes)
    // RFC 7009 §2.1: confidential clients authenticate; a public client names itself
    // (RFC 7009 §5: it can only revoke its own tokens, which it holds anyway).
    const { client } = await authenticateClient(request, form, clients, {
      allowPublic: true,
      onFailure: (clientId) =>
        onEvent({ type: 'client_authentication_failed', code: 'INVALID_CLIENT', clientId }),
    })
    const token = parameter(form, 'token', Number.POSITIVE_INFINITY)
    if (token === undefined)
      throw new OAuthError('invalid_request', 'The token parameter is missing.')
    parameter(form, 'token_type_hint', LIMITS.shortParameter)
    const now = clock()
    const found = await findActiveToken(context, token, now)
    // RFC 7009 §2.1: the server verifies the token was issued to the client; another client's
    // token is not revoked, and the answer does not say so.
    if (found !== undefined && found.active.family.clientId === client.id) {
      const { active, familyId, tokenHash } = found
      if (active.token.kind === 'refresh_token') {
        await context.store.revokeFamily(familyId, now, active.family.expiresAt)
      } else {
        await context.store.revokeToken(familyId, tokenHash, now)
      }
      onEvent({ type: 'token_revoked', clientId: client.id, familyId })
    }
    return new Response(null, { status: 200, headers: { 'cache-control': 'no-store' } })
  } catch (error) {
    return oauthErrorResponse(error, issuer, onEvent)
  }
}
