/**
 * The request body as a Fetch `ReadableStream`, pulled from the IncomingMessage one read at a
 * time so the socket is only read as fast as the handler reads (backpressure), and nothing
 * is read at all until the handler asks.
 *
 * The IncomingMessage is read in paused mode, taking exactly what it buffered
 * (`req.read(req.readableLength)`), and the end of the body is known from `req.complete`: so
 * reading the whole body does not make the IncomingMessage emit `'end'` by itself. The
 * handler form lets it end at once; the middleware form holds the end back, so that a block
 * which read the body and hands the request on can put the bytes back into the
 * IncomingMessage (`unshift`, allowed until `'end'`) for the framework's own body parsers.
 *
 * @module
 */
import { Buffer } from 'node:buffer'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { finished } from 'node:stream/promises'
import { NodeAdapterError } from '../errors.ts'

/**
 * How much of an abandoned request body is read and thrown away so the connection can be
 * reused. Past it the socket is closed. node:http itself drains without a bound.
 */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024

/**
 * Where the body stands: `idle` (never pulled), `reading`, `ended` (read to its end),
 * `cancelled` (the reader stopped; the rest is discarded), `failed`, or `handed-over` (the
 * IncomingMessage went on to the framework).
 */
type BodyState = 'idle' | 'reading' | 'ended' | 'cancelled' | 'failed' | 'handed-over'

/** The body of one IncomingMessage, streamed on demand. */
export class IncomingBody {
  /** The stream the Request reads. */
  readonly stream: ReadableStream<Uint8Array>
  readonly #req: IncomingMessage
  readonly #res: ServerResponse
  readonly #holdEnd: boolean
  #state: BodyState = 'idle'
  #controller!: ReadableStreamDefaultController<Uint8Array>
  #waiting: (() => void) | undefined

  /**
   * `holdEnd`: once the body was read to its end, leave the IncomingMessage before its
   * `'end'` until {@link handOver} or {@link release} (the middleware form).
   */
  constructor(req: IncomingMessage, res: ServerResponse, holdEnd = false) {
    this.#req = req
    this.#res = res
    this.#holdEnd = holdEnd
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller
        },
        pull: () => this.#pull(),
        cancel: () => this.#cancel(),
      },
      { highWaterMark: 0 },
    )
  }

  /** Whether the body was read to its end (and, held, has not ended the message yet). */
  get readToEnd(): boolean {
    return this.#state === 'ended'
  }

  readonly #onReadable = (): void => {
    const waiting = this.#waiting
    this.#waiting = undefined
    waiting?.()
  }

  readonly #onError = (error: Error): void => {
    this.#fail(
      new NodeAdapterError('REQUEST_ABORTED', 'The request body was interrupted.', {
        cause: error,
      }),
    )
  }

  readonly #onClose = (): void => {
    if (this.#state === 'reading') {
      this.#onError(new Error('The connection closed before the request body ended.'))
    }
  }

  readonly #onResponseFinish = (): void => {
    if (this.#state !== 'reading') return
    this.#fail(new NodeAdapterError('REQUEST_ABORTED', 'The response was already sent.'))
    discard(this.#req)
  }

  #pull(): Promise<void> | undefined {
    const req = this.#req
    if (this.#state === 'idle') {
      if (req.readableEnded) {
        this.#state = 'failed'
        this.#controller.error(
          new NodeAdapterError(
            'REQUEST_BODY_CONSUMED',
            'The request body was already read by something else, such as a body parser that ' +
              'turned it into an object (express.json(), a Fastify content-type parser): mount ' +
              'the handler before it, or let it hand over bytes (express.raw()).',
          ),
        )
        return undefined
      }
      this.#state = 'reading'
      req.on('readable', this.#onReadable)
      req.on('error', this.#onError)
      req.on('close', this.#onClose)
      this.#res.on('finish', this.#onResponseFinish)
    } else if (this.#state === 'handed-over') {
      this.#controller.error(
        new NodeAdapterError(
          'REQUEST_BODY_CONSUMED',
          'The request body was handed on to the framework and can no longer be read here.',
        ),
      )
      return undefined
    }
    if (this.#state !== 'reading') return undefined
    if (this.#readSome()) return undefined
    return new Promise((resolve) => {
      // Called on every 'readable' (see #onReadable) until something was enqueued, the body
      // ended, or reading stopped.
      const retry = (): void => {
        if (this.#state === 'reading' && !this.#readSome()) this.#waiting = retry
        else resolve()
      }
      this.#waiting = retry
    })
  }

  /** Enqueues what the IncomingMessage buffered, or closes at the end; false: nothing yet. */
  #readSome(): boolean {
    const req = this.#req
    const length = req.readableLength
    if (length > 0) {
      // Exactly the buffered length: reading past it would make the message emit 'end'.
      this.#controller.enqueue(req.read(length) as Buffer)
      return true
    }
    if (!req.complete) return false
    this.#settle('ended')
    this.#controller.close()
    if (!this.#holdEnd) endMessage(req)
    return true
  }

  #cancel(): void {
    if (this.#state !== 'reading' && this.#state !== 'idle') return
    const started = this.#state === 'reading'
    this.#settle('cancelled')
    if (started) discard(this.#req)
  }

  #fail(error: NodeAdapterError): void {
    if (this.#state !== 'reading') return
    this.#settle('failed')
    this.#controller.error(error)
  }

  #settle(state: BodyState): void {
    this.#state = state
    this.#req.off('readable', this.#onReadable)
    this.#req.off('error', this.#onError)
    this.#req.off('close', this.#onClose)
    this.#res.off('finish', this.#onResponseFinish)
    // A pull still waiting for data settles now.
    this.#onReadable()
  }

  /**
   * Hands the IncomingMessage on to the framework (the middleware form's `next`). A body never
   * read stays on the socket for the framework to read; a body read to its end is put back as
   * `bytes` (the body of the request the block handed on), and the IncomingMessage then reads
   * as if unread. Without `bytes` the IncomingMessage ends first (resolved once it emitted
   * `'end'`), so that body parsers find it consumed and leave it alone. A body read part way
   * stays as it is: what is left on the socket is all the framework can read.
   */
  async handOver(bytes: Uint8Array | undefined): Promise<void> {
    const req = this.#req
    if (this.#state === 'idle') this.#state = 'handed-over'
    else if (this.#state === 'reading') {
      this.#settle('handed-over')
      this.#controller.error(
        new NodeAdapterError(
          'REQUEST_BODY_CONSUMED',
          'The request body was handed on to the framework while it was being read.',
        ),
      )
    } else if (this.#state === 'ended') {
      this.#state = 'handed-over'
      if (bytes === undefined) {
        endMessage(req)
        await finished(req).catch(() => undefined)
        return
      }
      const length = req.headers['content-length']
      if (length !== undefined && length !== `${bytes.byteLength}`) {
        req.headers['content-length'] = `${bytes.byteLength}`
      }
      if (bytes.byteLength > 0) req.unshift(bytes)
    }
  }

  /**
   * After the answer (the middleware form): lets a held IncomingMessage end, and drops bytes
   * put back for the framework that nothing read, as node:http drops a body nobody read.
   */
  release(): void {
    const req = this.#req
    if (this.#state === 'ended') endMessage(req)
    else if (
      this.#state === 'handed-over' &&
      !req.readableEnded &&
      req.listenerCount('data') === 0 &&
      req.listenerCount('readable') === 0
    ) {
      req.resume()
    }
  }
}

/**
 * A stream of the request body. When the handler cancels it (a body limit) or the response
 * finishes before it was read to the end, the rest is discarded, up to
 * {@link DISCARD_LIMIT_BYTES}.
 */
export function incomingBody(
  req: IncomingMessage,
  res: ServerResponse,
): ReadableStream<Uint8Array> {
  return new IncomingBody(req, res).stream
}

/**
 * The whole body of an IncomingMessage framed by a Content-Length, read straight from it
 * without a web stream: what a handler reading the body whole (`arrayBuffer()`, `text()`,
 * core's `readRequestBody`) pays for on every request, a `ReadableStream`, its reader and a
 * native Response around it, otherwise. `undefined` (read the stream then) when the message
 * has no Content-Length, one over `maxBytes`, or something else has started reading it.
 * node:http never delivers more than the Content-Length, so the bytes held are at most that;
 * the failures are the stream's ({@link IncomingBody}): `REQUEST_ABORTED` when the connection
 * breaks or the response is sent before the body ended (the rest then discarded).
 *
 * `npm run bench -- oauth`, `POST /token` and its 50-byte form: the stream and the Response
 * were about a third of reading the form; in process, reading it went from 12.2 to 4.6 µs.
 */
export function readIncomingBody(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
): Promise<Uint8Array> | undefined {
  const declared = req.headers['content-length']
  if (
    declared === undefined ||
    !(Number(declared) <= maxBytes) ||
    req.headers['transfer-encoding'] !== undefined ||
    req.readableDidRead ||
    req.readableEnded ||
    req.listenerCount('readable') > 0 ||
    req.listenerCount('data') > 0
  ) {
    return undefined
  }
  // Usually the whole of a small body came with the header section: no listener at all.
  if (req.complete) {
    const bytes = req.readableLength > 0 ? (req.read(req.readableLength) as Buffer) : EMPTY
    endMessage(req)
    return Promise.resolve(bytes)
  }
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = []
    let length = 0
    const settle = (): void => {
      req.off('readable', onReadable)
      req.off('error', onError)
      req.off('close', onClose)
      res.off('finish', onResponseFinish)
    }
    const onReadable = (): void => {
      const buffered = req.readableLength
      if (buffered > 0) {
        // Exactly the buffered length: reading past it would make the message emit 'end'.
        const chunk = req.read(buffered) as Buffer
        chunks.push(chunk)
        length += chunk.byteLength
      }
      if (!req.complete) return
      settle()
      endMessage(req)
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length))
    }
    const onError = (error: Error): void => {
      settle()
      reject(
        new NodeAdapterError('REQUEST_ABORTED', 'The request body was interrupted.', {
          cause: error,
        }),
      )
    }
    const onClose = (): void => {
      if (!req.complete) onError(new Error('The connection closed before the request body ended.'))
    }
    const onResponseFinish = (): void => {
      settle()
      reject(new NodeAdapterError('REQUEST_ABORTED', 'The response was already sent.'))
      discard(req)
    }
    req.on('readable', onReadable)
    req.on('error', onError)
    req.on('close', onClose)
    res.on('finish', onResponseFinish)
  })
}

const EMPTY: Uint8Array = new Uint8Array(0)

// A message read to its end but not past it: one more read lets it emit 'end' (and close).
function endMessage(req: IncomingMessage): void {
  if (!req.readableEnded && req.readableLength === 0) req.read()
}

/**
 * Reads and drops what is left of a request body so the connection stays usable, closing
 * the socket past {@link DISCARD_LIMIT_BYTES}.
 */
function discard(req: IncomingMessage): void {
  if (req.destroyed || req.readableEnded) return
  let seen = 0
  req.on('data', (chunk: Buffer) => {
    seen += chunk.byteLength
    if (seen > DISCARD_LIMIT_BYTES) req.socket?.destroy()
  })
  req.on('error', () => {})
  req.resume()
}
