/**
 * What Express resolved about a request that node:http alone does not know: the target the
 * client sent, the scheme, host and client address under the app's `trust proxy` setting,
 * the route parameters, and a body a body parser already read.
 *
 * @module
 */
import type { NodeRequestOptions } from '@api-blocks/node'
import type { Request as ExpressRequest } from 'express'

/** The per-request inputs of the node adapter for an Express request. */
export function requestOptionsOf(req: ExpressRequest): NodeRequestOptions {
  return {
    target: req.originalUrl,
    protocol: req.protocol,
    host: req.host,
    clientAddress: req.ip,
    routeParams: req.params,
    body: req.body,
  }
}
