/**
 * Hono is a Fetch runtime: a Fetch handler mounts as a route with `c.req.raw` (the
 * Request) in and its Response out. No adapter package is involved.
 *
 * @module
 */
import { errorToProblemResponse } from '@api-blocks/problem-details'
import { Hono } from 'hono'
import { PREFIX } from './handler.ts'

/** The Hono app: `handler` answers every method under `mount`. */
export function createApp(
  handler: (request: Request) => Promise<Response>,
  mount = `${PREFIX}/*`,
): Hono {
  const app = new Hono()
  app.all(mount, (c) => handler(c.req.raw))
  // Hono catches what handlers throw; answer it as a problem, as the other adapters do.
  app.onError((error, c) => errorToProblemResponse(error, { request: c.req.raw }))
  return app
}
