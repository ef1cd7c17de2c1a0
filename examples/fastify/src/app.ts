/**
 * A Fastify 5 app with the Fetch handler registered under /v1 next to ordinary Fastify routes.
 *
 * @module
 */
import { fastifyFetchHandler } from '@api-blocks/fastify'
import type { FastifyInstance } from 'fastify'
import Fastify from 'fastify'
import { handler, PREFIX } from './handler.ts'

/** The Fastify app, ready to listen. */
export async function createApp(): Promise<FastifyInstance> {
  const app = Fastify()
  app.get('/', async () => `A Fastify app; the API lives under ${PREFIX}.`)
  // The plugin's routes read bodies themselves; Fastify's parsers stay on for the others.
  await app.register(fastifyFetchHandler, {
    prefix: PREFIX,
    handler,
    onError: (error) => app.log.error(error),
  })
  return app
}
