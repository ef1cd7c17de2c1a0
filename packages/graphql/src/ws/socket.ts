/**
 * One `ws` socket handed to graphql-ws's protocol server (`makeServer`): what
 * `graphql-ws/use/ws` does, with three differences. Failures go to `report`, not to the console.
 * A socket error raised by `ws` for the client's own fault (a message over the size limit, a bad
 * frame) is not an internal error: `ws` has already closed the socket with its code (1009,
 * 1002). A message of a type only the server sends (`connection_ack`, `next`, `error`) closes
 * the socket with 4400 Bad Request, where graphql-ws would throw (and so answer 4500).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { Server } from 'graphql-ws'
import { CloseCode } from 'graphql-ws'
import type { WebSocket } from 'ws'

/** What graphql-ws's hooks find in `ctx.extra`, as `graphql-ws/use/ws` provides it. */
export interface SocketExtra {
  readonly socket: WebSocket
  readonly request: IncomingMessage
}

const SERVER_ONLY = new Set(['connection_ack', 'next', 'error'])

function serverOnly(text: string): boolean {
  // Cheap first: only a message naming such a type is parsed here.
  if (!/"(connection_ack|next|error)"/.test(text)) return false
  try {
    const message: unknown = JSON.parse(text)
    return (
      typeof message === 'object' &&
      message !== null &&
      SERVER_ONLY.has((message as { type?: unknown }).type as string)
    )
  } catch {
    return false
  }
}

/**
 * Runs the `graphql-transport-ws` protocol on `socket` until it closes, pinging it every
 * `keepAlive` ms (0: never) and dropping it when a pong does not come back in that time.
 */
export function serveSocket<E extends SocketExtra>(
  server: Server<E>,
  socket: WebSocket,
  extra: E,
  keepAlive: number,
  report: (error: unknown) => void,
): void {
  // `ws` closes the socket itself after emitting these (RFC 6455 §7.4.1 codes); without a
  // listener, Node would throw the error.
  socket.on('error', () => {})
  let pongWait: ReturnType<typeof setTimeout> | undefined
  const pings =
    keepAlive > 0
      ? setInterval(() => {
          if (socket.readyState !== socket.OPEN) return
          pongWait = setTimeout(() => socket.terminate(), keepAlive)
          socket.once('pong', () => {
            clearTimeout(pongWait)
            pongWait = undefined
          })
          socket.ping()
        }, keepAlive)
      : undefined
  const closed = server.opened(
    {
      protocol: socket.protocol,
      send: (data) =>
        new Promise<void>((resolve, reject) => {
          if (socket.readyState !== socket.OPEN) return resolve()
          socket.send(data, (error) => (error ? reject(error) : resolve()))
        }),
      close: (code, reason) => socket.close(code, reason),
      onMessage: (handle) => {
        socket.on('message', async (data) => {
          const text = String(data)
          if (serverOnly(text)) {
            socket.close(CloseCode.BadRequest, 'Invalid message received')
            return
          }
          try {
            await handle(text)
          } catch (error) {
            report(error)
            socket.close(CloseCode.InternalServerError, 'Internal server error')
          }
        })
      },
    },
    extra,
  )
  socket.once('close', (code, reason) => {
    clearTimeout(pongWait)
    clearInterval(pings)
    closed(code, String(reason)).catch(report)
  })
}
