/**
 * The network peer of a request: what a Fetch `Request` cannot say, but rate limits and logs
 * need. The adapter records the socket's remote address for every request it converts.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { incomingMessageOf } from './internal/incoming-request.ts'

// Only native requests (`lightweight: false`) need the map: a lightweight request holds its
// IncomingMessage already, and a WeakMap entry per request costs the garbage collector.
const addresses = new WeakMap<Request, IncomingMessage>()

export function recordClient(request: Request, req: IncomingMessage): void {
  if (incomingMessageOf(request) === undefined) addresses.set(request, req)
}

/**
 * The remote IP address of the connection `request` arrived on (IPv4, or IPv6 as node reports
 * it, e.g. `::ffff:203.0.113.7` for a mapped IPv4 peer), or `undefined` for a request this
 * adapter did not convert or whose socket is gone. Behind a proxy this is the proxy's address:
 * read X-Forwarded-For yourself, and only from a proxy you trust.
 *
 * @example
 * ```ts
 * import { clientAddressOf, serve } from '@api-blocks/node'
 *
 * serve(async (request) => Response.json({ you: clientAddressOf(request) }), { port: 3000 })
 * ```
 */
export function clientAddressOf(request: Request): string | undefined {
  return (incomingMessageOf(request) ?? addresses.get(request))?.socket?.remoteAddress
}
