/**
 * What `serve()` adds to node:http for clients that hold connections without using them: the
 * longest-idle connection gives way when the server is full, and a connection may have only so
 * many pipelined requests in flight.
 *
 * @module
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/** The limits {@link guardConnections} enforces. */
export interface ConnectionGuard {
  /** The most connections open at once (`server.maxConnections`). */
  maxConnections: number
  /** The most requests of one connection between arrival and the end of their response. */
  maxPipelinedRequests: number
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void

/**
 * Watches `server`'s connections and returns `listener` wrapped to count each connection's
 * requests in flight.
 *
 * - Full server: node:http closes every new connection once `server.maxConnections` are open,
 *   so a few thousand sockets that never send a byte lock every client out until the headers
 *   timeout closes them. Here, the connection that fills the server closes the one that has
 *   been idle longest (connected or kept alive with no request in flight, or still trickling
 *   its header section), so a new client always finds room while any connection is idle; the
 *   way nginx reuses its idle keep-alive connections when it runs out. Closing an idle
 *   connection is allowed at any time (RFC 9112 §9.6); a client retries on a new one.
 * - Pipelining: node:http parses every request a client sends in one packet and runs the
 *   handler for each at once, holding every response in memory until the ones before it are
 *   written (RFC 9112 §9.3.2: responses go out in order). A client that sends thousands and
 *   never reads grows the process without bound. A connection with `maxPipelinedRequests`
 *   requests in flight that sends another is closed; the requests it already sent are
 *   abandoned (their handlers see the abort).
 */
export function guardConnections(
  server: Server,
  listener: Listener,
  guard: ConnectionGuard,
): Listener {
  // Every open connection and its requests in flight.
  const inFlight = new Map<Socket, number>()
  // The connections with none, longest idle first (a Set iterates in insertion order).
  const idle = new Set<Socket>()
  const { maxConnections, maxPipelinedRequests } = guard

  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0)
    idle.add(socket)
    socket.once('close', () => {
      inFlight.delete(socket)
      idle.delete(socket)
    })
    if (inFlight.size >= maxConnections) {
      for (const oldest of idle) {
        // Never the newcomer itself: with nothing else idle, node:http refuses the next one.
        if (oldest !== socket) {
          idle.delete(oldest)
          oldest.destroy()
        }
        break
      }
    }
  })

  return (req, res) => {
    const socket = req.socket
    const count = inFlight.get(socket)
    // A request on a socket this server did not accept (emitted by hand): nothing to count.
    if (count === undefined) {
      listener(req, res)
      return
    }
    if (count >= maxPipelinedRequests) {
      socket.destroy()
      return
    }
    inFlight.set(socket, count + 1)
    if (count === 0) idle.delete(socket)
    res.once('close', () => {
      const left = inFlight.get(socket)
      if (left === undefined) return
      inFlight.set(socket, left - 1)
      if (left === 1) idle.add(socket)
    })
    listener(req, res)
  }
}
