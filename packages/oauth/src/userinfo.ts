/**
 * The UserInfo endpoint (OpenID Connect Core §5.3): the end user's claims for an access token
 * that was granted `openid`, released by the token's scopes as in the ID token. A protected
 * resource of this server: the token only from `Authorization: Bearer` (RFC 6750 §2.1), errors
 * as RFC 6750 §3 challenges.
 *
 * @module
 */
import { releasedClaims } from './account.ts'
import type { ServerContext } from './context.ts'
import { tokenScopes } from './issue.ts'
import { LIMITS } from './limits.ts'
import { findActiveToken } from './lookup.ts'
import { noStoreJson } from './responses.ts'
import { methodNotAllowed } from './token-endpoint.ts'

function challenge(status: number, error: string | undefined, description?: string): Response {
  // RFC 6750 §3: no error code when the request had no token at all.
  const parameters =
    error === undefined ? '' : `, error="${error}", error_description="${description}"`
  return new Response(null, {
    status,
    headers: {
      'www-authenticate': `Bearer realm="userinfo"${parameters}`,
      'cache-control': 'no-store',
    },
  })
}

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i

/**
 * `GET` or `POST /userinfo`.
 *
 * @example
 * ```ts
 * const response = await handleUserInfo(context, new Request(url, { headers: { authorization: `Bearer ${token}` } }))
 * await response.json() // { sub: 'user-1', name: 'Ada Lovelace', … }
 * ```
 */
export async function handleUserInfo(context: ServerContext, request: Request): Promise<Response> {
  if (request.method !== 'GET' && request.method !== 'POST') return methodNotAllowed('GET, POST')
  const header = request.headers.get('authorization')
  if (header === null) return challenge(401, undefined)
  const match = header.length <= LIMITS.token + 7 ? BEARER.exec(header) : null
  if (match === null)
    return challenge(400, 'invalid_request', 'The Authorization field is not a Bearer token.')
  try {
    return await answer(context, match[1]!)
  } catch (error) {
    // The store or findAccount failed: a 500 that says nothing of why.
    context.options.onEvent({ type: 'server_error', code: 'SERVER_ERROR', error })
    return noStoreJson(
      { error: 'server_error', error_description: 'The server could not answer the request.' },
      500,
    )
  }
}

async function answer(context: ServerContext, token: string): Promise<Response> {
  const found = await findActiveToken(context, token, context.options.clock())
  if (found === undefined || found.active.token.kind !== 'access_token') {
    return challenge(401, 'invalid_token', 'The access token is invalid, expired or revoked.')
  }
  const { family } = found.active
  const scopes = tokenScopes(found.active.token, family)
  // OpenID Connect Core §5.3.1: only for tokens granted openid, which have a user.
  if (family.subject === undefined || !scopes.includes('openid')) {
    return challenge(403, 'insufficient_scope', 'The access token was not granted openid.')
  }
  const { findAccount } = context.options
  const account = findAccount === undefined ? undefined : await findAccount(family.subject)
  return noStoreJson({ ...releasedClaims(account, scopes), sub: family.subject })
}
