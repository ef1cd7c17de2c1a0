/**
 * Method dispatch for one resource: OPTIONS answered with `Allow`, HEAD derived from GET,
 * and 405 with `Allow` for every other method, unknown and oddly cased ones included.
 *
 * @module
 */

import type { Handler } from '@api-blocks/core'
import { readAhead, wholeBodyOf } from '@api-blocks/core'
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
 *   (RFC 9110 §9.3.2), with the body's Content-Length when GET gave none (the body is
 *   measured in memory, or read and dropped, up to 1 MiB; never for an event stream);
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
      const headers = new Headers(response.headers)
      // RFC 9110 §8.6: a HEAD response MAY carry the Content-Length of the GET content. It is
      // recorded, so that a layer outside (compress()) decides on HEAD as it would on GET.
      const length = headers.has('content-length') ? undefined : await lengthOf(response)
      if (length !== undefined) headers.set('content-length', String(length))
      else response.body?.cancel().catch(() => undefined)
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

/**
 * The most bytes of a GET body read to give its HEAD a Content-Length (1 MiB): the GET handler
 * has already made the body, and reading it costs no more than sending it would.
 */
const MAX_HEAD_MEASURE_BYTES = 1024 * 1024

/**
 * The length of the GET body, for its HEAD: measured when it is in memory, read (and dropped)
 * when it is a stream of at most {@link MAX_HEAD_MEASURE_BYTES}; `undefined` past that, for an
 * event stream (which does not end), and for a status without content (RFC 9110 §8.6: no
 * Content-Length on a 204; a 304 has no content).
 */
async function lengthOf(response: Response): Promise<number | undefined> {
  const { status, body } = response
  if (status < 200 || status === 204 || status === 304) return undefined
  const whole = wholeBodyOf(response)
  if (whole === null) return 0
  if (typeof whole === 'string') return new TextEncoder().encode(whole).byteLength
  if (whole !== undefined) return whole.byteLength
  if (body === null) return 0
  const type = response.headers.get('content-type')
  if (type !== null && /^\s*text\/event-stream\s*(;|$)/i.test(type)) return undefined
  try {
    const ahead = await readAhead(body, MAX_HEAD_MEASURE_BYTES)
    if (ahead.complete) return ahead.bytes.byteLength
    ahead.stream.cancel().catch(() => undefined)
  } catch {
    // A GET body that fails while it is read: its HEAD goes without a length.
  }
  return undefined
}
