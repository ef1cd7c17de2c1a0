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

const COUNTED_SOCKET: unique symbol = Symbol('api-blocks.countedSocket')
/** A response whose connection's count goes down when it closes. */
type Counted = ServerResponse & { [COUNTED_SOCKET]?: Socket }

/**
 * How long a keep-alive connection must have been idle before a new one may close it: one
 * that finished a request a moment ago is likely to send the next (closing it then races that
 * request, RFC 9112 §9.3.1).
 */
const KEPT_MIN_IDLE_MS = 1_000

/**
 * Watches `server`'s connections and returns `listener` wrapped to count each connection's
 * requests in flight.
 *
 * - Full server: node:http closes every new connection once `server.maxConnections` are open,
 *   so a few thousand sockets that never send a byte lock every client out until the headers
 *   timeout closes them. Here, the connection that fills the server closes the one that has
 *   been idle longest among those that never finished a request (connected, or still
 *   trickling a header section), else among keep-alive connections idle for a second or more,
 *   so a new client finds room while any connection is idle, and a flood of connections that
 *   send nothing closes its own before anyone's keep-alive connection; the way nginx reuses
 *   its idle keep-alive connections when it runs out. Closing an idle
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
  // The connections with none, longest idle first (a Set iterates in insertion order): those
  // that never finished a request (connected, or still trickling a header section), and those
  // kept alive after one, with the time they became idle.
  const fresh = new Set<Socket>()
  const kept = new Map<Socket, number>()
  const { maxConnections, maxPipelinedRequests } = guard

  // Who gives way: a connection that never finished a request first, so that a flood of
  // connections that send nothing closes its own oldest ones, not the keep-alive connections
  // of clients that use theirs; then a keep-alive connection idle for KEPT_MIN_IDLE_MS or more.
  const evict = (newcomer: Socket): void => {
    for (const oldest of fresh) {
      // Never the newcomer itself: with nothing else idle, node:http refuses the next one.
      if (oldest === newcomer) break
      fresh.delete(oldest)
      oldest.destroy()
      return
    }
    for (const [oldest, since] of kept) {
      if (performance.now() - since < KEPT_MIN_IDLE_MS) return
      kept.delete(oldest)
      oldest.destroy()
      return
    }
  }

  function responseClosed(this: Counted): void {
    const socket = this[COUNTED_SOCKET]
    const left = socket === undefined ? undefined : inFlight.get(socket)
    if (socket === undefined || left === undefined) return
    inFlight.set(socket, left - 1)
    if (left === 1) kept.set(socket, performance.now())
  }

  // A CONNECT is answered on its socket, which then closes: never idle, never the one to give way.
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    fresh.delete(socket)
    kept.delete(socket)
  })

  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0)
    fresh.add(socket)
    socket.once('close', () => {
      inFlight.delete(socket)
      fresh.delete(socket)
      kept.delete(socket)
    })
    if (inFlight.size >= maxConnections) evict(socket)
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
    if (count === 0) {
      fresh.delete(socket)
      kept.delete(socket)
    }
    // One listener function for every response (no closure per request: bench service).
    ;(res as Counted)[COUNTED_SOCKET] = socket
    res.on('close', responseClosed)
    listener(req, res)
  }
}
