/**
 * The two function shapes every api-blocks block is written against, and `compose()`, which
 * stacks middleware in front of a handler. Everything is plain Web `Request` → `Response`.
 *
 * @module
 */
import { copyContext } from './context.ts'

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
 * change the response that comes back. A middleware may hand `next` another `Request` (one
 * that carries a body it read, or a rewritten URL): `compose()` copies the per-request context
 * (see `getContext`) onto it.
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
      (next, layer) => (request) =>
        layer(request, (forwarded) => {
          // A layer that hands on another Request (one that read the body, one that rewrote
          // the URL) keeps the per-request context: request id, error rendering, negotiation.
          if (forwarded !== request) copyContext(request, forwarded)
          return next(forwarded)
        }),
      handler,
    )
  }
}
