/**
 * The token endpoint (RFC 6749 §3.2): a POST form, the client authenticated, then one of the
 * three grants. Errors are the RFC 6749 §5.2 JSON every OAuth client reads.
 *
 * @module
 */
import { authenticateClient } from './client-auth.ts'
import type { ServerContext } from './context.ts'
import { OAuthError } from './error.ts'
import { parameter, readForm } from './form.ts'
import { clientCredentialsGrant } from './grant-client-credentials.ts'
import { authorizationCodeGrant } from './grant-code.ts'
import { refreshTokenGrant } from './grant-refresh.ts'
import { LIMITS } from './limits.ts'
import { oauthErrorResponse } from './responses.ts'

const GRANTS = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
  client_credentials: clientCredentialsGrant,
} as const

/**
 * A 405 for a method the endpoint does not take, with `Allow` (RFC 9110 §15.5.6).
 *
 * @example
 * ```ts
 * return methodNotAllowed('POST') // 405, Allow: POST
 * ```
 */
export function methodNotAllowed(allow: string): Response {
  return new Response(null, { status: 405, headers: { allow, 'cache-control': 'no-store' } })
}

/**
 * `POST /token`.
 *
 * @example
 * ```ts
 * const response = await handleToken(context, request)
 * ```
 */
export async function handleToken(context: ServerContext, request: Request): Promise<Response> {
  if (request.method !== 'POST') return methodNotAllowed('POST')
  const { issuer, clients, maxFormBytes, onEvent } = context.options
  try {
    const form = await readForm(request, maxFormBytes)
    const grantType = parameter(form, 'grant_type', LIMITS.shortParameter)
    if (grantType === undefined)
      throw new OAuthError('invalid_request', 'The grant_type parameter is missing.')
    // RFC 9700 §2.4: no password grant; the implicit flow never reaches here. Anything else
    // (device code, token exchange, JWT bearer) is not implemented.
    if (!Object.hasOwn(GRANTS, grantType)) {
      throw new OAuthError('unsupported_grant_type', 'The grant type is not supported.')
    }
    const grant = grantType as keyof typeof GRANTS
    const { client } = await authenticateClient(request, form, clients, {
      allowPublic: grant !== 'client_credentials',
      onFailure: (clientId) =>
        onEvent({ type: 'client_authentication_failed', code: 'INVALID_CLIENT', clientId }),
    })
    if (!client.grantTypes.includes(grant)) {
      throw new OAuthError('unauthorized_client', `The client may not use the ${grant} grant.`)
    }
    return await GRANTS[grant](context, client, form)
  } catch (error) {
    return oauthErrorResponse(error, issuer, onEvent)
  }
}
