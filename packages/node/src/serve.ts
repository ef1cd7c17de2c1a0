/**
 * The one-line server: node:http listening with a Fetch handler, with limits against clients
 * that hold connections open without using them.
 *
 * @module
 */
import type { Server, ServerOptions } from 'node:http'
import { createServer } from 'node:http'
import type { Handler } from '@api-blocks/core'
import { toNodeConnectListener } from './connect.ts'
import { guardConnections } from './internal/connections.ts'
import {
  ASSUMED_OPEN_FILE_LIMIT,
  connectionsWithin,
  openFileLimit,
} from './internal/descriptors.ts'
import { toNodeListener } from './listener.ts'
import type { NodeAdapterOptions } from './options.ts'

/**
 * Options of {@link serve}.
 *
 * @example
 * ```ts
 * const options: ServeOptions = { port: 3000, hostname: '127.0.0.1', server: { headersTimeout: 5000 } }
 * ```
 */
export interface ServeOptions extends NodeAdapterOptions {
  /** The TCP port; 0 picks a free one (read it from `server.address()`). Default 3000. */
  port?: number
  /** The address to bind; default all interfaces, as `server.listen()` does. */
  hostname?: string
  /**
   * Passed to `http.createServer`, over these defaults (node's own in brackets), which close
   * connections that hold the server without sending a request:
   * - `headersTimeout` 10 000 ms (60 000): the whole header section must arrive within it,
   *   counted from the connection or from the end of the previous response; a client that
   *   sends nothing, or one byte a second, gets 408 and is closed.
   * - `requestTimeout` 30 000 ms (300 000): the whole request, body included.
   * - `keepAliveTimeout` 5000 ms (the same): an idle keep-alive connection is closed after it
   *   (node adds a second of grace).
   * - `connectionsCheckingInterval` 1000 ms (30 000): how often the two request timeouts are
   *   checked, so a connection outlives them by at most this much.
   *
   * Anything else (`maxHeaderSize`, `requireHostHeader` …) keeps node's default.
   */
  server?: ServerOptions
  /**
   * Milliseconds a connection may go without a byte read or written before it is destroyed
   * (`server.timeout`), whatever it is doing: a client that stopped reading a response, or a
   * handler silent that long. Default 60 000; 0 turns it off (node's default). A stream that
   * may stay silent longer (server-sent events) should send a comment line now and then.
   */
  idleTimeout?: number
  /**
   * The most connections open at once (`server.maxConnections`). Default: 90% of the
   * process's open-file limit (the soft `RLIMIT_NOFILE`, read from `/proc/self/limits` or
   * `ulimit -n`; 1024 assumed when neither answers, as on Windows), and at least 64 below it,
   * so that the process keeps descriptors for its store connections and files. When a new
   * connection fills the server, the connection idle the longest is closed to make room (one
   * with no request in flight: connected or kept alive and silent, or still sending its header
   * section), so a pile of idle sockets cannot lock clients out; only when none is idle does
   * node:http refuse new connections. `Infinity` turns both off.
   */
  maxConnections?: number
  /**
   * The most requests one connection may have in flight (arrived, response not yet written):
   * HTTP/1.1 pipelining, whose responses go out in order (RFC 9112 §9.3.2). A connection that
   * sends one more is closed. Default 16; `Infinity` turns it off, and then a client that
   * pipelines thousands of requests and never reads keeps every response in memory.
   */
  maxPipelinedRequests?: number
}

const SERVER_DEFAULTS: ServerOptions = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
}

/**
 * Starts a node:http server for `handler` and returns it; it is listening once it emits
 * `'listening'`. Close it with `server.close()`. Besides the listener of `toNodeListener()`, it
 * answers CONNECT through the handler (`toNodeConnectListener()`), sets timeouts for clients
 * that send slowly or not at all, and caps connections and pipelined requests (see
 * {@link ServeOptions} for the defaults).
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
  const idleTimeout = options.idleTimeout ?? 60_000
  if (!Number.isSafeInteger(idleTimeout) || idleTimeout < 0) {
    throw new TypeError('serve(): idleTimeout must be a whole number of milliseconds >= 0')
  }
  const maxConnections =
    options.maxConnections ?? connectionsWithin(openFileLimit() ?? ASSUMED_OPEN_FILE_LIMIT)
  const maxPipelinedRequests = options.maxPipelinedRequests ?? 16
  if (!isCount(maxConnections) || !isCount(maxPipelinedRequests)) {
    throw new TypeError(
      'serve(): maxConnections and maxPipelinedRequests must be whole numbers >= 1 or Infinity',
    )
  }
  const server = createServer({ ...SERVER_DEFAULTS, ...options.server })
  server.timeout = idleTimeout
  server.maxConnections = maxConnections
  const listener = toNodeListener(handler, options)
  const unguarded =
    maxConnections === Number.POSITIVE_INFINITY && maxPipelinedRequests === Number.POSITIVE_INFINITY
  server.on(
    'request',
    unguarded
      ? listener
      : guardConnections(server, listener, { maxConnections, maxPipelinedRequests }),
  )
  server.on('connect', toNodeConnectListener(handler, options))
  server.listen(options.port ?? 3000, options.hostname)
  return server
}

function isCount(value: number): boolean {
  return value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && value >= 1)
}
