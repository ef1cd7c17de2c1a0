/**
 * A Fastify plugin that serves a Fetch handler for every method and path under its prefix,
 * with the body left on the socket for the handler to read (and limit) itself.
 *
 * @module
 */
import type { Handler } from '@api-blocks/core'
import type { FastifyPluginCallback } from 'fastify'
import type { FastifyAdapterOptions } from './handler.ts'
import { toFastifyHandler } from './handler.ts'

/**
 * Options of {@link fastifyFetchHandler}, besides Fastify's own `prefix`.
 *
 * @example
 * ```ts
 * const options: FastifyFetchHandlerOptions = { handler: async () => new Response('ok') }
 * ```
 */
export interface FastifyFetchHandlerOptions extends FastifyAdapterOptions {
  /** The Fetch handler that answers every request under the prefix. */
  handler: Handler
}

/**
 * Registers `handler` for every method on every path of its encapsulation context. Inside it,
 * every content-type parser is replaced by one that reads nothing, so the handler receives
 * the body as a stream and applies its own size limit (Fastify's `bodyLimit` does not apply).
 * Parsers outside the plugin's context are untouched.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify'
 * import { fastifyFetchHandler } from '@api-blocks/fastify'
 *
 * const app = Fastify()
 * await app.register(fastifyFetchHandler, { prefix: '/v1', handler: async (request) => Response.json({ url: request.url }) })
 * await app.listen({ port: 3000 })
 * ```
 */
export const fastifyFetchHandler: FastifyPluginCallback<FastifyFetchHandlerOptions> = (
  instance,
  { handler, lightweight, onError },
  done,
) => {
  instance.removeAllContentTypeParsers()
  instance.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null))
  const route = toFastifyHandler(handler, { lightweight, onError })
  // '/' stands for the prefix itself (with and without a trailing slash), '/*' for the rest.
  instance.all('/', route)
  instance.all('/*', route)
  done()
}
