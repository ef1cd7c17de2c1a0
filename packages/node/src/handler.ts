/**
 * The contract every adapter serves.
 *
 * @module
 */

/**
 * A Fetch handler: one Request in, one Response out. Every api-blocks block composes into
 * one of these, and every adapter serves one.
 *
 * @example
 * ```ts
 * const handler: Handler = async (request) => Response.json({ path: new URL(request.url).pathname })
 * ```
 */
export type Handler = (request: Request) => Promise<Response>
