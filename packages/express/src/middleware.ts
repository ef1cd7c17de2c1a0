/**
 * Any api-blocks middleware as an Express middleware, in front of Express's own routes.
 *
 * @module
 */
import type { Middleware } from '@api-blocks/core'
import { handleNodeMiddleware, installLightweightGlobals } from '@api-blocks/node'
import type { Request as ExpressRequest, Response as ExpressResponse, NextFunction } from 'express'
import type { ExpressAdapterOptions } from './handler.ts'
import { requestOptionsOf } from './request.ts'

/**
 * An Express 5 `(req, res, next)` middleware.
 *
 * @example
 * ```ts
 * const limit: ExpressMiddleware = toExpressMiddleware(requestId())
 * ```
 */
export type ExpressMiddleware = (
  req: ExpressRequest,
  res: ExpressResponse,
  next: NextFunction,
) => void

/**
 * The `(req, res, next)` form of an api-blocks `Middleware` (`requestId()`, `cors()`,
 * `rateLimit()`, `idempotency()`, a precondition check, an error boundary …), for
 * `app.use()` before the app's own routes.
 *
 * - When the block answers itself (429, 304, 412, a replayed 201 …), that Response is sent
 *   and the later Express handlers do not run.
 * - When the block calls its `next(request)`, Express's `next()` runs the later middleware,
 *   routers and handlers. What they send (`res.json()`, `res.send()`, `res.writeHead()`,
 *   `stream.pipe(res)` …) comes back to the block as the Response its `next` resolves to:
 *   their status, the header fields set on `res` (also those set before this middleware),
 *   and their body as a stream, with backpressure. The block may read and change it (add
 *   rate-limit fields, store it for replays, compress it); what the block answers is sent,
 *   exactly. Its `next` runs Express once.
 * - The request body: a body the block does not read stays on the socket for the later
 *   handlers. A body the block reads to its end and hands on (`idempotency()` reads it to
 *   fingerprint it) is put back into the request, so `express.json()` after this middleware
 *   parses it as if unread. A body the block reads part way, or consumes without handing
 *   it on, is gone for them.
 * - The Request the block sees: URL `req.originalUrl` on the scheme and host Express
 *   resolved, `clientAddressOf(request)` is `req.ip` (the app's `trust proxy` setting), and a
 *   body an earlier body parser read is handed over as in `toExpressHandler`.
 * - An error the block throws answers its problem (`application/problem+json`), as every
 *   adapter does; it is not passed to Express's error handlers. 5xx go to `onError`.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { requestId } from '@api-blocks/http'
 * import { toExpressMiddleware } from '@api-blocks/express'
 *
 * const app = express()
 * app.use(toExpressMiddleware(requestId())) // X-Request-Id on every answer, Express's included
 * app.get('/hello', (_req, res) => {
 *   res.json({ hello: 'world' })
 * })
 * app.listen(3000)
 * ```
 */
export function toExpressMiddleware(
  middleware: Middleware,
  options: ExpressAdapterOptions = {},
): ExpressMiddleware {
  if (options.lightweight === true) installLightweightGlobals()
  return (req, res, next) => {
    void handleNodeMiddleware(middleware, req, res, () => next(), {
      ...options,
      ...requestOptionsOf(req),
    })
  }
}
