/**
 * Serve a Fetch handler `(request: Request) => Promise<Response>` from node:http, with
 * streamed bodies in both directions, abort on client disconnect, and problems for errors;
 * or put any api-blocks middleware in front of a `(req, res, next)` framework's handlers.
 * Handlers get native undici Request objects and the globals are left alone, unless the
 * lightweight fast path is opted into (`lightweight: true`).
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

export type { Handler, Middleware } from '@api-blocks/core'
export { clientAddressOf, routeParamsOf } from '@api-blocks/core'
export type { NodeConnectListener } from './connect.ts'
export { toNodeConnectListener } from './connect.ts'
export type { NodeAdapterErrorCode } from './errors.ts'
export { NodeAdapterError } from './errors.ts'
export { installLightweightGlobals, restoreNativeGlobals } from './lightweight.ts'
export type { NodeListener } from './listener.ts'
export { handleNodeRequest, toNodeListener } from './listener.ts'
export { handleNodeMiddleware } from './middleware.ts'
export type { NodeAdapterOptions, NodeRequestOptions } from './options.ts'
export type { ServeOptions } from './serve.ts'
export { serve } from './serve.ts'
