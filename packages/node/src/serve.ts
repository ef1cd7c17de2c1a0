/**
 * The one-line server: node:http listening with a Fetch handler.
 *
 * @module
 */
import type { Server, ServerOptions } from 'node:http'
import { createServer } from 'node:http'
import type { Handler } from '@api-blocks/core'
import { toNodeListener } from './listener.ts'
import type { NodeAdapterOptions } from './options.ts'

/**
 * Options of {@link serve}.
 *
 * @example
 * ```ts
 * const options: ServeOptions = { port: 3000, hostname: '127.0.0.1', server: { keepAliveTimeout: 5000 } }
 * ```
 */
export interface ServeOptions extends NodeAdapterOptions {
  /** The TCP port; 0 picks a free one (read it from `server.address()`). Default 3000. */
  port?: number
  /** The address to bind; default all interfaces, as `server.listen()` does. */
  hostname?: string
  /** Passed to `http.createServer` (timeouts, header size limits …). */
  server?: ServerOptions
}

/**
 * Starts a node:http server for `handler` and returns it; it is listening once it emits
 * `'listening'`. Close it with `server.close()`.
 *
 * @example
 * ```ts
 * import { once } from 'node:events'
 * import { serve } from '@api-blocks/node'
 *
 * const server = serve(async () => Response.json({ ok: true }), { port: 3000, hostname: '127.0.0.1' })
 * await once(server, 'listening')
 * ```
 */
export function serve(handler: Handler, options: ServeOptions = {}): Server {
  const server = createServer(options.server ?? {}, toNodeListener(handler, options))
  server.listen(options.port ?? 3000, options.hostname)
  return server
}
