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
    const res = new ServerResponse(req)
    // `Connection: close`: whatever the client sends after the header section is tunnel data.
    res.shouldKeepAlive = false
    res.assignSocket(socket as Parameters<ServerResponse['assignSocket']>[0])
    void handleNodeRequest(handler, req, res, options).finally(() => {
      if (socket.destroyed) return
      if (res.writableFinished) socket.end(() => socket.destroy())
      else res.once('finish', () => socket.end(() => socket.destroy()))
    })
  }
}

function destroy(this: Duplex): void {
  this.destroy()
}
