/**
 * Binding an interaction to the browser that started it (RFC 9700 §4.7, login CSRF; RFC 6749
 * §10.12): `/authorize` sets a cookie named after the interaction, holding a random value the
 * store keeps only as an HMAC (`bindingHash`); the host's pages pass their request in, and an
 * interaction is shown, completed or refused only for the browser that holds the cookie. An
 * interaction id that leaks (a referrer, a log, a link sent to a victim) is useless elsewhere.
 *
 * @module
 */
import { decodeBase64url } from '@api-blocks/core'
import { timingSafeEqual } from '@api-blocks/core/crypto'
import type { ServerContext } from './context.ts'
import { isCodeShape, randomSecret } from './tokens.ts'

/** The largest `Cookie` field read: browsers send at most a few KiB. */
const MAX_COOKIE_FIELD = 16 * 1024

/**
 * The name of the cookie that binds interaction `id`: one per interaction, so two sign-ins in
 * two tabs do not overwrite each other.
 *
 * @example
 * ```ts
 * bindingCookieName('hIz7W3UoHeRVB2dRzW6BKg') // 'oauth_interaction_hIz7W3UoHeRVB2dRzW6BKg'
 * ```
 */
function bindingCookieName(id: string): string {
  return `oauth_interaction_${id}`
}

/** The cookie's path: the issuer's path (where the host's pages live too), or `/`. */
function cookiePath(issuer: string): string {
  const path = new URL(issuer).pathname.replace(/\/$/, '')
  return path === '' ? '/' : path
}

function attributes(issuer: string, maxAge: number): string {
  // RFC 6265 §4.1: HttpOnly (no script reads it), SameSite=Lax (sent on the top-level
  // redirect from the client, not on cross-site subrequests), Secure over https.
  const secure = new URL(issuer).protocol === 'https:' ? '; Secure' : ''
  return `Path=${cookiePath(issuer)}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`
}

/**
 * A new binding: the `Set-Cookie` value for the browser, and the hash the store keeps.
 *
 * @example
 * ```ts
 * const { setCookie, bindingHash } = await newBinding(context, interactionId)
 * ```
 */
export async function newBinding(
  context: ServerContext,
  id: string,
): Promise<{ setCookie: string; bindingHash: string }> {
  const { random, issuer, ttl } = context.options
  const value = randomSecret(random)
  return {
    setCookie: `${bindingCookieName(id)}=${value}; ${attributes(issuer, ttl.interaction)}`,
    bindingHash: await context.hash(value),
  }
}

/**
 * The `Set-Cookie` value that removes the binding cookie of interaction `id` (Max-Age=0).
 *
 * @example
 * ```ts
 * response.headers.append('set-cookie', clearBinding(issuer, id))
 * ```
 */
export function clearBinding(issuer: string, id: string): string {
  return `${bindingCookieName(id)}=; ${attributes(issuer, 0)}`
}

/** The value of the cookie `name` in `request`, or `undefined`. */
function cookieValue(request: Request, name: string): string | undefined {
  const field = request.headers.get('cookie')
  if (field === null || field.length > MAX_COOKIE_FIELD) return undefined
  for (const pair of field.split(';')) {
    const equals = pair.indexOf('=')
    if (equals === -1) continue
    if (pair.slice(0, equals).trim() === name) return pair.slice(equals + 1).trim()
  }
  return undefined
}

/**
 * Whether `request` carries the binding cookie of the interaction whose stored hash is
 * `bindingHash`; the hashes are compared in constant time.
 *
 * @example
 * ```ts
 * if (!(await isBound(context, request, interaction.id, interaction.bindingHash))) return refuse()
 * ```
 */
export async function isBound(
  context: ServerContext,
  request: Request | undefined,
  id: string,
  bindingHash: string,
): Promise<boolean> {
  if (request === undefined) return false
  const value = cookieValue(request, bindingCookieName(id))
  if (value === undefined || !isCodeShape(value)) return false
  const presented = decodeBase64url(await context.hash(value))
  const expected = decodeBase64url(bindingHash)
  return presented !== undefined && expected !== undefined && timingSafeEqual(presented, expected)
}
