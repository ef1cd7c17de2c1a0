/**
 * Serve a Fetch handler `(request: Request) => Promise<Response>` from node:http, with
 * streamed bodies in both directions, abort on client disconnect, and problems for errors.
 *
 * @example
 * ```ts
 * import { serve } from '@api-blocks/node'
 *
 * serve(async (request) => Response.json({ url: request.url }), { port: 3000 })
 * ```
 *
 * @module
 */

export { clientAddressOf } from './client-address.ts'
export type { NodeAdapterErrorCode } from './errors.ts'
export { NodeAdapterError } from './errors.ts'
export type { Handler } from './handler.ts'
export type { NodeAdapterOptions, NodeListener, NodeRequestOptions } from './listener.ts'
export { handleNodeRequest, toNodeListener } from './listener.ts'
export type { ServeOptions } from './serve.ts'
export { serve } from './serve.ts'
