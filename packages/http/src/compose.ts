/**
 * `compose()`, which stacks middleware in front of a handler. The `Handler` and `Middleware`
 * types and the per-request context it carries are `@api-blocks/core`'s.
 *
 * @module
 */
import type { Handler, Middleware } from '@api-blocks/core'
import { copyContext } from '@api-blocks/core'

/**
 * Stacks middleware in front of a handler. The first middleware listed sees the request
 * first and the response last (the outermost layer). A middleware that hands `next` another
 * Request keeps the per-request context: it is copied over (core's `copyContext`).
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
