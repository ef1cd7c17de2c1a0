/**
 * Fastify 5 in front of a Fetch handler. The route hijacks the reply and writes the
 * Response through `@api-blocks/node` on `reply.raw`: faster than `reply.send(response)`,
 * which reads every body through a stream, and the same conversion as every other adapter.
 *
 * @module
 */
import type { Handler } from '@api-blocks/core'
import type { NodeAdapterOptions } from '@api-blocks/node'
import { handleNodeRequest, installLightweightGlobals } from '@api-blocks/node'
import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Options of {@link toFastifyHandler}. Proxy trust follows Fastify's `trustProxy` option
 * (through `request.protocol`, `request.host` and `request.ip`), so there is no `trustProxy`
 * here.
 *
 * @example
 * ```ts
 * const options: FastifyAdapterOptions = { onError: (error) => console.error(error) }
 * ```
 */
export type FastifyAdapterOptions = Omit<NodeAdapterOptions, 'trustProxy'>

/**
 * A Fastify route handler that answers through the raw response.
 *
 * @example
 * ```ts
 * const route: FastifyFetchHandler = toFastifyHandler(async () => new Response('ok'))
 * ```
 */
export type FastifyFetchHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

/**
 * A Fastify route handler serving `handler`. `clientAddressOf(request)` is `request.ip` and
 * `routeParamsOf(request)` is `request.params`, so Fastify's `trustProxy` option and its route
 * patterns apply. The body streams from the socket when no
 * content-type parser consumed it (register {@link fastifyFetchHandler}, which installs a
 * pass-through parser); otherwise a string or Buffer body is handed over (strings as UTF-8)
 * and a parsed object fails to read with `NodeAdapterError` `REQUEST_BODY_CONSUMED` (a 500).
 *
 * Headers set on the reply before the handler ran (by hooks) are sent too; the Response's
 * own headers win a conflict. onSend hooks do not run for these routes; onResponse hooks and
 * request logging do.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify'
 * import { routeParamsOf, toFastifyHandler } from '@api-blocks/fastify'
 *
 * const app = Fastify()
 * app.get('/orders/:id', toFastifyHandler(async (request) => Response.json({ id: routeParamsOf(request)?.['id'] })))
 * await app.listen({ port: 3000 })
 * ```
 */
export function toFastifyHandler(
  handler: Handler,
  options: FastifyAdapterOptions = {},
): FastifyFetchHandler {
  if (options.lightweight === true) installLightweightGlobals()
  return (request, reply) => {
    reply.hijack()
    const res = reply.raw
    const preset = reply.getHeaders()
    for (const name in preset) {
      const value = preset[name]
      if (value !== undefined) res.setHeader(name, value)
    }
    return handleNodeRequest(handler, request.raw, res, {
      ...options,
      target: request.raw.url,
      protocol: request.protocol,
      host: request.host,
      clientAddress: request.ip,
      routeParams: request.params as Readonly<Record<string, unknown>>,
      body: request.body,
    })
  }
}
