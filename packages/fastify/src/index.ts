/**
 * Serve a Fetch handler `(request: Request) => Promise<Response>` from Fastify 5.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify'
 * import { fastifyFetchHandler } from '@api-blocks/fastify'
 *
 * const app = Fastify()
 * await app.register(fastifyFetchHandler, { handler: async () => Response.json({ ok: true }) })
 * await app.listen({ port: 3000 })
 * ```
 *
 * @module
 */

export { clientAddressOf, routeParamsOf } from '@api-blocks/core'
export type { FastifyAdapterOptions, FastifyFetchHandler } from './handler.ts'
export { toFastifyHandler } from './handler.ts'
export type { FastifyFetchHandlerOptions } from './plugin.ts'
export { fastifyFetchHandler } from './plugin.ts'
