/**
 * The two function shapes every api-blocks block is written against, and `compose()`, which
 * stacks middleware in front of a handler. Everything is plain Web `Request` → `Response`.
 *
 * @module
 */

/**
 * A Fetch handler: answers one request.
 *
 * @example
 * ```ts
 * const hello: Handler = async () => new Response('hello')
 * ```
 */
export type Handler = (request: Request) => Promise<Response>

/**
 * Middleware: sees the request first, decides whether and how to call `next`, and may
 * change the response that comes back. Pass the same `Request` object to `next` so the
 * per-request context (see `getContext`) stays reachable.
 *
 * @example
 * ```ts
 * const poweredBy: Middleware = async (request, next) => {
 *   const response = await next(request)
 *   response.headers.set('x-powered-by', 'api-blocks')
 *   return response
 * }
 * ```
 */
export type Middleware = (request: Request, next: Handler) => Promise<Response>

/**
 * Stacks middleware in front of a handler. The first middleware listed sees the request
 * first and the response last (the outermost layer).
 *
 * @example
 * ```ts
 * const app: Handler = compose(requestId(), cors({ origin: ['https://app.example'] }))(
 *   async () => Response.json({ ok: true }),
 * )
 * const response = await app(new Request('https://api.example/'))
 * ```
 */
export function compose(...middleware: readonly Middleware[]): (handler: Handler) => Handler {
  for (const [index, layer] of middleware.entries()) {
    if (typeof layer !== 'function') {
      throw new TypeError(`compose(): middleware at position ${index} is not a function`)
    }
  }
  return (handler: Handler): Handler => {
    if (typeof handler !== 'function')
      throw new TypeError('compose(): the handler is not a function')
    return middleware.reduceRight<Handler>(
      (next, layer) => (request) => layer(request, next),
      handler,
    )
  }
}
