/**
 * Serving a Fetch handler from node:http: IncomingMessage in, Request to the handler,
 * Response back out to the ServerResponse. A handler that throws answers a problem; nothing
 * it does can crash the process.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Handler } from '@api-blocks/core'
import {
  bodySourceOf,
  checkResponse,
  createRequest,
  problemFor,
  send,
} from './internal/exchange.ts'
import { installLightweightGlobals } from './lightweight.ts'
import type { NodeAdapterOptions, NodeRequestOptions } from './options.ts'

/**
 * A node:http `'request'` listener.
 *
 * @example
 * ```ts
 * const listener: NodeListener = toNodeListener(async () => new Response('ok'))
 * ```
 */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void

/**
 * A node:http request listener serving `handler`. With `lightweight: true` it installs the
 * lightweight globals now (see `installLightweightGlobals()`), so responses built before the
 * first request are lightweight too.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { toNodeListener } from '@api-blocks/node'
 *
 * createServer(toNodeListener(async () => Response.json({ ok: true }))).listen(3000)
 * ```
 */
export function toNodeListener(handler: Handler, options: NodeAdapterOptions = {}): NodeListener {
  if (options.lightweight === true) installLightweightGlobals()
  return (req, res) => {
    void handleNodeRequest(handler, req, res, options)
  }
}

/**
 * Serves one request: converts it, runs `handler`, writes the Response. Never rejects: a
 * thrown error answers its problem (`errorToProblemResponse`), a failure mid-body destroys
 * the socket, and both are reported to `onError`. It records the client's address
 * (`clientAddressOf`: `options.clientAddress`, else the socket's) and `options.routeParams`
 * (`routeParamsOf`). It never installs the lightweight globals: with `lightweight: true` the
 * handler gets the lazy Request while they are installed (by an adapter, or by calling
 * `installLightweightGlobals()`), a native one otherwise.
 *
 * @example
 * ```ts
 * // Inside a framework route whose req/res are node:http objects:
 * await handleNodeRequest(handler, req, res, { target: req.originalUrl, clientAddress: req.ip })
 * ```
 */
export async function handleNodeRequest(
  handler: Handler,
  req: IncomingMessage,
  res: ServerResponse,
  options: NodeRequestOptions = {},
): Promise<void> {
  let request: Request | undefined
  let response: Response
  try {
    request = createRequest(req, res, options, bodySourceOf(options.body))
    response = checkResponse(await handler(request))
  } catch (error) {
    response = problemFor(error, request, options)
  }
  await send(res, response, req.method === 'HEAD', options, request)
}
