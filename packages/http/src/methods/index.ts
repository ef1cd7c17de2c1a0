/**
 * Method dispatch for one resource: OPTIONS answered with `Allow`, HEAD derived from GET,
 * and 405 with `Allow` for every other method, unknown and oddly cased ones included.
 *
 * @module
 */

import type { Handler } from '@api-blocks/core'
import { wholeBodyOf } from '@api-blocks/core'
import { problems } from '@api-blocks/problem-details'
import { problemResponse } from '../errors.ts'
import { isToken } from '../internal/syntax.ts'

/**
 * The handlers of one resource, keyed by method name (case-sensitive: `GET`, not `get`).
 *
 * @example
 * ```ts
 * const handlers: MethodHandlers = { GET: async () => Response.json([]) }
 * ```
 */
export type MethodHandlers = Readonly<Partial<Record<string, Handler>>>

// RFC 9110 §9.1: method names are case-sensitive; the standardised ones are uppercase.
const STANDARD = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']

/**
 * The `Allow` value for a set of handlers: the methods given, plus HEAD when GET is there and
 * OPTIONS, in a stable order.
 *
 * @example
 * ```ts
 * allowedMethods({ GET: get, POST: post }) // ['GET', 'HEAD', 'POST', 'OPTIONS']
 * ```
 */
export function allowedMethods(handlers: MethodHandlers): string[] {
  const names = new Set(Object.keys(handlers).filter((name) => handlers[name] !== undefined))
  if (names.has('GET')) names.add('HEAD')
  names.add('OPTIONS')
  const rank = (name: string): number => {
    const at = STANDARD.indexOf(name)
    return at < 0 ? STANDARD.length : at
  }
  return [...names].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * The 405 answer: `problems.methodNotAllowed` with `allowed_methods`, and the `Allow` header
 * RFC 9110 §15.5.6 requires.
 *
 * @example
 * ```ts
 * return methodNotAllowed(request, ['GET', 'HEAD', 'OPTIONS'])
 * ```
 */
export function methodNotAllowed(request: Request, allowed: readonly string[]): Response {
  const allow = [...allowed]
  return problemResponse(
    problems.methodNotAllowed.create({
      allowed_methods: allow,
      detail: `Allowed methods: ${allow.join(', ')}`,
    }),
    request,
    { allow: allow.join(', ') },
  )
}

/**
 * Turns the handlers of one resource into one Handler:
 * - a method with a handler runs it;
 * - HEAD without its own handler runs GET and drops the body, keeping status and headers
 *   (RFC 9110 §9.3.2), and the body's Content-Length when it was in memory;
 * - OPTIONS without its own handler answers 200 with `Allow` and no content (RFC 9110 §9.3.7);
 * - anything else (unknown methods such as `FOO`, and `get` or `patch` in lowercase, since
 *   method names are case-sensitive) answers 405 with `Allow` (RFC 9110 §15.5.6).
 *
 * Throws a TypeError when a key is not a method token, or is a standard method in the
 * wrong case (`get`), which would never match a request.
 *
 * @example
 * ```ts
 * const orders: Handler = methods({
 *   GET: async () => Response.json([]),
 *   POST: async () => new Response(null, { status: 201, headers: { location: '/v1/orders/1' } }),
 * })
 * ```
 */
export function methods(handlers: MethodHandlers): Handler {
  for (const name of Object.keys(handlers)) {
    if (!isToken(name)) throw new TypeError(`methods(): "${name}" is not a method name`)
    if (name !== name.toUpperCase() && STANDARD.includes(name.toUpperCase())) {
      throw new TypeError(`methods(): method names are case-sensitive; use "${name.toUpperCase()}"`)
    }
    if (typeof handlers[name] !== 'function' && handlers[name] !== undefined) {
      throw new TypeError(`methods(): the handler for ${name} is not a function`)
    }
  }
  const allowed = allowedMethods(handlers)
  const allow = allowed.join(', ')
  const table = new Map(
    Object.entries(handlers).filter(([, handler]) => handler !== undefined),
  ) as Map<string, Handler>

  return async (request) => {
    const handler = table.get(request.method)
    if (handler !== undefined) return handler(request)
    const get = table.get('GET')
    // RFC 9110 §9.3.2: HEAD is GET without content; the server SHOULD send the same header
    // fields it would have sent for GET.
    if (request.method === 'HEAD' && get !== undefined) {
      const response = await get(request)
      if (response.type === 'error') return response
      response.body?.cancel().catch(() => undefined)
      const headers = new Headers(response.headers)
      // RFC 9110 §8.6: a HEAD response MAY carry the Content-Length of the GET content. It is
      // recorded when the GET body is in memory (measured without being read), so that a
      // layer outside (compress()) decides on HEAD as it would on GET.
      const whole = wholeBodyOf(response)
      if (!headers.has('content-length') && whole != null && hasContent(response.status)) {
        const length =
          typeof whole === 'string' ? new TextEncoder().encode(whole).byteLength : whole.byteLength
        headers.set('content-length', String(length))
      }
      return new Response(null, {
        status: response.status,
        statusText: response.statusText,
        headers,
      })
    }
    // RFC 9110 §9.3.7: OPTIONS describes the communication options of the target resource.
    if (request.method === 'OPTIONS') {
      return new Response(null, { status: 200, headers: { allow, 'content-length': '0' } })
    }
    return methodNotAllowed(request, allowed)
  }
}

// RFC 9110 §8.6: no Content-Length on a 1xx or 204 (nor on a 304, which has no content).
function hasContent(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304
}
