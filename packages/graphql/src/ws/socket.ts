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

/** What graphql-ws's hooks find in `ctx.extra`, as `graphql-ws/use/ws` provides it, and the room. */
export interface SocketExtra {
  readonly socket: WebSocket
  readonly request: IncomingMessage
  readonly room: Room
}

/**
 * Backpressure for one socket. `ws` queues what is sent while the client does not read; the
 * subscriptions of the socket hand on each event only through the room, which lets one in at a
 * time while `socket.bufferedAmount` is at most `maxBufferedBytes`. Each send (issued or
 * written out) lets the next one in, so the bytes queued stay within the bound plus a message
 * or two (a query's result sent meanwhile also lets one in); each subscription holds at most one event while it waits, and is not pulled again
 * meanwhile, so further events wait in their source (a pub/sub's bounded buffer).
 *
 * @example
 * ```ts
 * const room = new Room(socket, 1024 * 1024)
 * for await (const result of paced(subscription, room)) send(result)
 * ```
 */
export class Room {
  readonly #socket: WebSocket
  readonly #maxBufferedBytes: number
  readonly #waiting: (() => void)[] = []
  #closed = false
  #admitted = false

  constructor(socket: WebSocket, maxBufferedBytes: number) {
    this.#socket = socket
    this.#maxBufferedBytes = maxBufferedBytes
  }

  /** Resolves once the caller may send an event. */
  enter(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve)
      this.#next()
    })
  }

  /** Something was sent or written out, or a subscription ended: the next may go in. */
  check(): void {
    this.#admitted = false
    this.#next()
  }

  /** The socket closed: everyone waiting goes on (to find their operation ended). */
  close(): void {
    this.#closed = true
    this.#next()
  }

  #next(): void {
    if (this.#closed) {
      for (const wake of this.#waiting.splice(0)) wake()
      return
    }
    // One at a time: the next is let in once the send this one leads to is issued.
    if (this.#admitted || this.#socket.bufferedAmount > this.#maxBufferedBytes) return
    const wake = this.#waiting.shift()
    if (wake === undefined) return
    this.#admitted = true
    wake()
  }
}

/**
 * `source` pulled one event at a time, each handed on only once `room` lets it in; returning it
 * (the client completed the operation) returns `source`.
 *
 * @example
 * ```ts
 * for await (const result of paced(await subscribe(args), room)) send(result)
 * ```
 */
export function paced<T>(source: AsyncIterable<T>, room: Room): AsyncGenerator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]()
  const end = async (): Promise<IteratorResult<T, void>> => {
    await iterator.return?.()
    room.check()
    return { done: true, value: undefined }
  }
  const generator: AsyncGenerator<T, void, undefined> = {
    async next() {
      const result = (await iterator.next()) as IteratorResult<T, void>
      // The event is handed on (to be sent at once, which lets the next in) only once there is
      // room; meanwhile the source is not pulled again.
      if (result.done !== true) await room.enter()
      return result
    },
    return: end,
    async throw(error: unknown) {
      await end()
      throw error
    },
    [Symbol.asyncIterator]() {
      return generator
    },
    async [Symbol.asyncDispose]() {
      await end()
    },
  }
  return generator
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
          socket.send(data, (error) => {
            extra.room.check()
            if (error) reject(error)
            else resolve()
          })
          extra.room.check()
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
    extra.room.close()
    clearTimeout(pongWait)
    clearInterval(pings)
    closed(code, String(reason)).catch(report)
  })
}
