/**
 * An Express 5 app with the Fetch handler mounted under /v1 next to ordinary Express routes.
 *
 * @module
 */
import { toExpressHandler } from '@api-blocks/express'
import type { Express } from 'express'
import express from 'express'
import { handler, PREFIX } from './handler.ts'

/** The Express app. */
export function createApp(): Express {
  const app = express()
  app.disable('x-powered-by')
  app.get('/', (_req, res) => {
    res.type('text/plain').send(`An Express app; the API lives under ${PREFIX}.`)
  })
  // Mount the handler before any body parser: it reads (and limits) bodies itself.
  app.use(PREFIX, toExpressHandler(handler, { onError: (error) => console.error(error) }))
  return app
}
