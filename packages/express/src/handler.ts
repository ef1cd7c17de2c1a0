/**
 * Express 5 in front of a Fetch handler. Express's req and res are node:http objects, so this
 * only decides what Express changed (the mount path, proxy trust, a parsed body) and hands
 * the rest to `@api-blocks/node`.
 *
 * @module
 */
import type { Handler, NodeAdapterOptions } from '@api-blocks/node'
import { handleNodeRequest, NodeAdapterError } from '@api-blocks/node'
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express'

/**
 * Options of {@link toExpressHandler}. Proxy trust follows the app's `trust proxy` setting
 * (through `req.protocol` and `req.host`), so there is no `trustProxy` here.
 */
export type ExpressAdapterOptions = Omit<NodeAdapterOptions, 'trustProxy'>

/** An Express 5 middleware that always answers (it never calls `next`). */
export type ExpressFetchHandler = (req: ExpressRequest, res: ExpressResponse) => void

/**
 * An Express middleware serving `handler`, for `app.use(path, …)` or a route. The Request
 * URL is the one the client sent (`req.originalUrl`, mount path included), on the scheme and
 * host Express resolved. The body streams from the socket unless a body parser ran first:
 * a Buffer (`express.raw()`) or string (`express.text()`, re-encoded as UTF-8) is handed
 * over as it is, while a parsed object (`express.json()`, `express.urlencoded()`) cannot be
 * turned back into bytes, and reading it fails with `REQUEST_BODY_CONSUMED` (a 500).
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { toExpressHandler } from '@api-blocks/express'
 *
 * const app = express()
 * app.use('/v1', toExpressHandler(async (request) => Response.json({ url: request.url })))
 * app.listen(3000)
 * ```
 */
export function toExpressHandler(
  handler: Handler,
  options: ExpressAdapterOptions = {},
): ExpressFetchHandler {
  const { lightweight, onError } = options
  return (req, res) => {
    void handleNodeRequest(handler, req, res, {
      target: req.originalUrl,
      protocol: req.protocol,
      host: req.host,
      body: parsedBody(req),
      lightweight,
      onError,
    })
  }
}

function parsedBody(req: ExpressRequest): Uint8Array | ReadableStream<Uint8Array> | undefined {
  const body: unknown = req.body
  if (body === undefined) return undefined
  if (body instanceof Uint8Array) return body
  if (typeof body === 'string') return Buffer.from(body, 'utf8')
  return new ReadableStream({
    start(controller) {
      controller.error(
        new NodeAdapterError(
          'REQUEST_BODY_CONSUMED',
          'An Express body parser already turned the request body into an object. Mount the ' +
            'Fetch handler before express.json() / express.urlencoded(), or use express.raw().',
        ),
      )
    },
  })
}
