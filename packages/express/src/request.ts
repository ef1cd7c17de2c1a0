/**
 * What Express resolved about a request that node:http alone does not know: the target the
 * client sent, the scheme, host and client address under the app's `trust proxy` setting,
 * the route parameters, and a body a body parser already read.
 *
 * @module
 */
import type { NodeRequestOptions } from '@api-blocks/node'
import { NodeAdapterError } from '@api-blocks/node'
import type { Request as ExpressRequest } from 'express'

/** The per-request inputs of the node adapter for an Express request. */
export function requestOptionsOf(req: ExpressRequest): NodeRequestOptions {
  return {
    target: req.originalUrl,
    protocol: req.protocol,
    host: req.host,
    clientAddress: req.ip,
    routeParams: paramsOf(req.params),
    body: parsedBody(req),
  }
}

// Express 5 gives a wildcard (`/*path`) its segments as an array: they are joined back.
function paramsOf(params: unknown): Readonly<Record<string, string>> | undefined {
  if (typeof params !== 'object' || params === null) return undefined
  let recorded: Record<string, string> | undefined
  for (const [name, value] of Object.entries(params)) {
    const text =
      typeof value === 'string'
        ? value
        : Array.isArray(value) && value.every((part) => typeof part === 'string')
          ? value.join('/')
          : undefined
    if (text === undefined) continue
    recorded ??= {}
    recorded[name] = text
  }
  return recorded
}

function parsedBody(req: ExpressRequest): Uint8Array | ReadableStream<Uint8Array> | undefined {
  const body: unknown = req.body
  if (body === undefined) return undefined
  if (body instanceof Uint8Array) return body
  if (typeof body === 'string') return Buffer.from(body, 'utf8')
  return new ReadableStream({
    start(controller) {
      controller.error(
        new NodeAdapterError(
          'REQUEST_BODY_CONSUMED',
          'An Express body parser already turned the request body into an object. Mount the ' +
            'Fetch handler before express.json() / express.urlencoded(), or use express.raw().',
        ),
      )
    },
  })
}
