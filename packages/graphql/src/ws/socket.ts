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
import { iteratorOf } from '../iterator.ts'

/**
 * What graphql-ws's hooks find in `ctx.extra`, as `graphql-ws/use/ws` provides it, the room and
 * the operations.
 */
export interface SocketExtra {
  readonly socket: WebSocket
  readonly request: IncomingMessage
  readonly room: Room
  readonly operations: Operations
}

/** One operation of {@link Operations}, from its `subscribe` message until it ends. */
export interface Operation {
  /** Ends the operation's subscription, once it has one. */
  end?: () => unknown
}

/**
 * The operations of one socket, by id, from their `subscribe` message until they end: while the
 * operation is admitted (an `await`), while it runs, and after the client's `complete` until its
 * subscription has returned. graphql-ws forgets an id on `complete` at once, even while the
 * operation is still being admitted; counting and ending operations here instead keeps every
 * subscription to the socket's `maxOperations`, and ends each one when the socket closes.
 *
 * @example
 * ```ts
 * const operations = new Operations()
 * const operation = operations.start('1') // undefined: '1' still runs
 * socket.once('close', () => operations.close())
 * ```
 */
export class Operations {
  readonly #running = new Map<string, Operation>()
  #closed = false

  /** Operations running. */
  get size(): number {
    return this.#running.size
  }

  /** Starts operation `id`; `undefined` while an operation with this id still runs, or after close. */
  start(id: string): Operation | undefined {
    if (this.#closed || this.#running.has(id)) return undefined
    const operation: Operation = {}
    this.#running.set(id, operation)
    return operation
  }

  /** The operation running as `id`, if any. */
  current(id: string): Operation | undefined {
    return this.#running.get(id)
  }

  /** `operation` ended. */
  finish(id: string, operation: Operation): void {
    if (this.#running.get(id) === operation) this.#running.delete(id)
  }

  /** The socket closed: every operation ends, and none starts any more. */
  close(): void {
    this.#closed = true
    const running = [...this.#running.values()]
    this.#running.clear()
    for (const operation of running) operation.end?.()
  }
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

  /** Whether the socket queues more than `maxBufferedBytes` unsent. */
  get full(): boolean {
    return this.#socket.bufferedAmount > this.#maxBufferedBytes
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
    if (this.#admitted || this.full) return
    const wake = this.#waiting.shift()
    if (wake === undefined) return
    this.#admitted = true
    wake()
  }
}

/**
 * `source` pulled one event at a time, each handed on only once `room` lets it in; returning it
 * (the client completed the operation, the socket closed) returns `source`, once. `ended` is
 * called when it ends (returned, done or failed).
 *
 * @example
 * ```ts
 * for await (const result of paced(await subscribe(args), room, () => {})) send(result)
 * ```
 */
export function paced<T>(
  source: AsyncIterable<T>,
  room: Room,
  ended: () => void,
): AsyncGenerator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]()
  let returned: Promise<unknown> | undefined
  const end = async (): Promise<IteratorResult<T, void>> => {
    ended()
    returned ??= Promise.resolve(iterator.return?.())
    await returned
    room.check()
    return { done: true, value: undefined }
  }
  return iteratorOf(async () => {
    let result: IteratorResult<T, void>
    try {
      result = (await iterator.next()) as IteratorResult<T, void>
    } catch (error) {
      ended()
      throw error
    }
    if (result.done === true) ended()
    // The event is handed on (to be sent at once, which lets the next in) only once there is
    // room; meanwhile the source is not pulled again.
    else await room.enter()
    return result
  }, end)
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
  const send = (data: string): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (socket.readyState !== socket.OPEN) return resolve()
      socket.send(data, (error) => {
        extra.room.check()
        if (error) reject(error)
        else resolve()
      })
      extra.room.check()
    })
  const closed = server.opened(
    {
      protocol: socket.protocol,
      send,
      // graphql-ws PROTOCOL.md, Ping: the server answers each with a Pong (echoing the payload).
      // A client sending pings without reading would grow the queue without bound, so pings
      // that find more than `maxBufferedBytes` queued go unanswered (a Pong is optional to the
      // protocol's keep-alive: the client may then close the socket for a missing one).
      onPing: (payload) => {
        if (extra.room.full) return undefined
        return send(JSON.stringify(payload ? { type: 'pong', payload } : { type: 'pong' }))
      },
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
    extra.operations.close()
    extra.room.close()
    clearTimeout(pongWait)
    clearInterval(pings)
    closed(code, String(reason)).catch(report)
  })
}
