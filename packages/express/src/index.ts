/**
 * Serve a Fetch handler `(request: Request) => Promise<Response>` from Express 5.
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

export type { ExpressAdapterOptions, ExpressFetchHandler } from './handler.ts'
export { toExpressHandler } from './handler.ts'
