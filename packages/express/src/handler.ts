/**
 * Express 5 in front of a Fetch handler. Express's req and res are node:http objects, so this
 * only decides what Express changed (the mount path, proxy trust, route parameters, a parsed
 * body) and hands the rest to `@api-blocks/node`.
 *
 * @module
 */
import type { Handler } from '@api-blocks/core'
import type { NodeAdapterOptions } from '@api-blocks/node'
import { handleNodeRequest, installLightweightGlobals } from '@api-blocks/node'
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express'
import { requestOptionsOf } from './request.ts'

/**
 * Options of {@link toExpressHandler} and `toExpressMiddleware`. Proxy trust follows the
 * app's `trust proxy` setting (through `req.protocol`, `req.host` and `req.ip`), so there is
 * no `trustProxy` here.
 *
 * @example
 * ```ts
 * const options: ExpressAdapterOptions = { onError: (error) => console.error(error) }
 * ```
 */
export type ExpressAdapterOptions = Omit<NodeAdapterOptions, 'trustProxy'>

/**
 * An Express 5 middleware that always answers (it never calls `next`).
 *
 * @example
 * ```ts
 * const route: ExpressFetchHandler = toExpressHandler(async () => new Response('ok'))
 * ```
 */
export type ExpressFetchHandler = (req: ExpressRequest, res: ExpressResponse) => void

/**
 * An Express middleware serving `handler`, for `app.use(path, …)` or a route. The Request
 * URL is the one the client sent (`req.originalUrl`, mount path included), on the scheme and
 * host Express resolved; `clientAddressOf(request)` is `req.ip` and `routeParamsOf(request)`
 * is `req.params` (a wildcard's segments joined with `/`), so the app's `trust proxy` setting
 * and its route patterns apply. The body streams from the socket unless a body parser ran
 * first: a Buffer (`express.raw()`) or string (`express.text()`, re-encoded as UTF-8) is
 * handed over as it is, while a parsed object (`express.json()`, `express.urlencoded()`)
 * cannot be turned back into bytes, and reading it fails with `NodeAdapterError`
 * `REQUEST_BODY_CONSUMED` (a 500).
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { routeParamsOf, toExpressHandler } from '@api-blocks/express'
 *
 * const app = express()
 * app.get('/orders/:id', toExpressHandler(async (request) => Response.json({ id: routeParamsOf(request)?.['id'] })))
 * app.listen(3000)
 * ```
 */
export function toExpressHandler(
  handler: Handler,
  options: ExpressAdapterOptions = {},
): ExpressFetchHandler {
  if (options.lightweight === true) installLightweightGlobals()
  return (req, res) => {
    void handleNodeRequest(handler, req, res, { ...options, ...requestOptionsOf(req) })
  }
}
