/**
 * An Express 5 app: an api-blocks block in front of every route (Express's own included), and
 * the Fetch handler mounted under /v1 next to ordinary Express routes.
 *
 * @module
 */
import { toExpressHandler, toExpressMiddleware } from '@api-blocks/express'
import { requestId } from '@api-blocks/http'
import type { Express } from 'express'
import express from 'express'
import { handler, PREFIX } from './handler.ts'

/** The Express app. */
export function createApp(): Express {
  const app = express()
  app.disable('x-powered-by')
  // A block as Express middleware: X-Request-Id on every answer, Express's own included.
  app.use(toExpressMiddleware(requestId()))
  app.get('/', (_req, res) => {
    res.type('text/plain').send(`An Express app; the API lives under ${PREFIX}.`)
  })
  // Mount the handler before any body parser: it reads (and limits) bodies itself.
  app.use(PREFIX, toExpressHandler(handler, { onError: (error) => console.error(error) }))
  // Express's own routes after it parse bodies as usual.
  app.post('/echo', express.json(), (req, res) => {
    res.json({ echo: req.body })
  })
  return app
}
