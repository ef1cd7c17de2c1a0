/**
 * CONNECT, which node:http never hands to a `'request'` listener: without a `'connect'`
 * listener it destroys the socket, so the client gets no answer at all.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Handler } from '@api-blocks/core'
import { handleNodeRequest } from './listener.ts'
import type { NodeAdapterOptions } from './options.ts'

/**
 * A node:http `'connect'` listener.
 *
 * @example
 * ```ts
 * const listener: NodeConnectListener = toNodeConnectListener(async () => new Response(null, { status: 405 }))
 * ```
 */
export type NodeConnectListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void

/**
 * A node:http `'connect'` listener that answers CONNECT like any other method: the handler gets
 * a Request whose method is `CONNECT`, whose URL is the target authority with the path `/`
 * (`CONNECT example.com:443` is `http://example.com:443/`) and which has no body; its answer
 * is written to the socket, which is then closed. It never opens a tunnel (RFC 9110 §9.3.6):
 * answer 405 (a router's `methods()` does) or 501. `serve()` installs it; add it yourself to a
 * server you create:
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { toNodeConnectListener, toNodeListener } from '@api-blocks/node'
 *
 * const handler = async () => Response.json({ ok: true })
 * createServer(toNodeListener(handler)).on('connect', toNodeConnectListener(handler)).listen(3000)
 * ```
 */
export function toNodeConnectListener(
  handler: Handler,
  options: NodeAdapterOptions = {},
): NodeConnectListener {
  return (req, socket) => {
    // node:http stopped watching this socket: a reset or a stalled client is ours to handle.
    socket.on('error', destroy)
    socket.on('timeout', destroy)
    const answer = (): void => {
      try {
        const res = new ServerResponse(req)
        // `Connection: close`: whatever the client sends after the header section is tunnel data.
        res.shouldKeepAlive = false
        res.assignSocket(socket as Parameters<ServerResponse['assignSocket']>[0])
        void handleNodeRequest(handler, req, res, options).finally(() => {
          if (res.writableFinished) close(socket)
          else res.once('finish', () => close(socket))
        })
      } catch {
        socket.destroy()
      }
    }
    // A CONNECT pipelined behind requests whose responses are still being written: each holds
    // the socket in turn (answers go out in order, RFC 9112 §9.3.2), and node hands it to the
    // next one when one finishes. Answer once none holds it; assigning the socket earlier would
    // throw out of this listener and take the process down.
    const afterPending = (): void => {
      const pending = (socket as { _httpMessage?: ServerResponse | null })._httpMessage
      if (!pending) {
        answer()
        return
      }
      pending.once('finish', afterPending)
      pending.once('close', () => {
        if (!pending.writableFinished) socket.destroy()
      })
    }
    afterPending()
  }
}

/** How long the bytes a client sent after its CONNECT are read and dropped before closing. */
const LINGER_MS = 2_000

/**
 * Closes after the answer, gracefully (RFC 9112 §9.6): half-close, then read and drop what the
 * client still sends, so that unread bytes do not make the kernel reset the connection and
 * wipe out the answer before the client reads it; destroyed once the client closes too, or
 * after {@link LINGER_MS}.
 */
function close(socket: Duplex): void {
  if (socket.destroyed) return
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
  socket.end()
  socket.resume()
}

function destroy(this: Duplex): void {
  this.destroy()
}
