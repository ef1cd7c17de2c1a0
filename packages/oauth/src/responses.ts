/**
 * The response shapes of the JSON endpoints: `Cache-Control: no-store` on everything that
 * carries a token or a token's state (RFC 6749 §5.1, RFC 7662 §2.2), and the RFC 6749 §5.2 error.
 *
 * @module
 */
import { OAuthError } from './error.ts'
import type { OAuthEvent } from './events.ts'

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const

/**
 * A JSON response that no cache keeps.
 *
 * @example
 * ```ts
 * return noStoreJson({ active: false })
 * ```
 */
export function noStoreJson(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...NO_STORE },
  })
}

/**
 * The RFC 6749 §5.2 answer for `error`; `invalid_client` gets 401 and a `WWW-Authenticate`
 * challenge for the realm (RFC 6749 §5.2 requires it when the client tried Basic; we send it
 * always, so a client learns which scheme to use). Anything that is not an OAuthError is a
 * server fault: it says nothing of itself to the client, and goes to `onEvent`.
 *
 * @example
 * ```ts
 * return oauthErrorResponse(new OAuthError('invalid_grant', 'Expired.'), issuer, onEvent)
 * ```
 */
export function oauthErrorResponse(
  error: unknown,
  realm: string,
  onEvent: (event: OAuthEvent) => void,
): Response {
  if (!(error instanceof OAuthError)) onEvent({ type: 'server_error', code: 'SERVER_ERROR', error })
  const oauth =
    error instanceof OAuthError
      ? error
      : new OAuthError('server_error', 'The server could not answer the request.')
  const response = noStoreJson(oauth.toJSON(), oauth.status)
  if (oauth.error === 'invalid_client') {
    response.headers.set('www-authenticate', `Basic realm="${realm.replace(/["\\]/g, '\\$&')}"`)
  }
  return response
}
