/**
 * Express 5 and api-blocks: serve a Fetch handler from Express (`toExpressHandler`), or put
 * any api-blocks middleware in front of Express's own routes (`toExpressMiddleware`).
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { toExpressHandler } from '@api-blocks/express'
 *
 * express().use(toExpressHandler(async () => Response.json({ ok: true }))).listen(3000)
 * ```
 *
 * @module
 */

export { clientAddressOf, routeParamsOf } from '@api-blocks/core'
export type { ExpressAdapterOptions, ExpressFetchHandler } from './handler.ts'
export { toExpressHandler } from './handler.ts'
export type { ExpressMiddleware } from './middleware.ts'
export { toExpressMiddleware } from './middleware.ts'
