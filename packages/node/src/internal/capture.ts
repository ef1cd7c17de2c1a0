/**
 * The middleware form's downstream: what the framework's later handlers send, as a Response.
 *
 * While the downstream runs, the ServerResponse's `writeHead`, `write`, `end` and
 * `flushHeaders` are replaced on the instance (as the `compression` package does), so nothing
 * reaches the socket: the status and the header fields set on the response become the
 * Response's when the header section would have been sent (an explicit `writeHead`, or the
 * first `write`, `end` or `flushHeaders`), and the bytes written become its body stream. The
 * body is pulled: `write()` answers false once 16 KiB wait unread and `'drain'` is emitted
 * when the reader took them, so a downstream that honours backpressure (`stream.pipe(res)`)
 * is held back by whoever reads the Response (the block, then the socket).
 *
 * The block's own answer is written afterwards through the methods the response had before
 * ({@link DownstreamCapture.sink}).
 *
 * @module
 */
import type { OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { NativeResponse } from './native.ts'
import type { ResponseSink } from './write.ts'

/** What the downstream may write before `write()` answers false, as node's default. */
const HIGH_WATER_MARK = 16 * 1024

type Callback = (error?: Error | null) => void
type Method = 'writeHead' | 'write' | 'end' | 'flushHeaders' | 'headersSent'

const METHODS: readonly Method[] = ['writeHead', 'write', 'end', 'flushHeaders', 'headersSent']

interface Pending {
  readonly chunk: Uint8Array
  readonly callback: Callback | undefined
}

// The getter a property has further up the prototype chain (`headersSent`).
function inheritedGetter(object: object, name: string): (() => unknown) | undefined {
  for (
    let proto = Object.getPrototypeOf(object);
    proto !== null;
    proto = Object.getPrototypeOf(proto)
  ) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, name)
    if (descriptor !== undefined) return descriptor.get
  }
  return undefined
}

function chunkOf(chunk: unknown, encoding: unknown): Uint8Array {
  if (typeof chunk === 'string') {
    return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
  }
  if (chunk instanceof Uint8Array) return chunk
  throw new TypeError('The "chunk" argument must be of type string, Buffer or Uint8Array.')
}

function setHeaders(res: ServerResponse, headers: unknown): void {
  if (Array.isArray(headers)) {
    // writeHead's own rule: the fields given replace those of the same name set before.
    const pairs: [string, OutgoingHttpHeader][] = Array.isArray(headers[0])
      ? (headers as [string, string][])
      : []
    if (pairs.length === 0) {
      for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([headers[i], headers[i + 1]])
    }
    for (const [name] of pairs) res.removeHeader(name)
    for (const [name, value] of pairs) res.appendHeader(name, value as string | string[])
  } else if (typeof headers === 'object' && headers !== null) {
    for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders)) {
      if (value !== undefined) res.setHeader(name, value)
    }
  }
}

function headersOf(res: ServerResponse): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const item of value) headers.append(name, item)
    else headers.append(name, `${value}`)
  }
  return headers
}

/** The downstream of one request in the middleware form. */
export class DownstreamCapture {
  /** Settles with the downstream's Response once its header section is known. */
  readonly response: Promise<Response>
  /** The response's writing methods as they were before the capture. */
  readonly sink: ResponseSink
  readonly #res: ServerResponse
  readonly #bodyless: boolean
  readonly #preset: ReadonlySet<string>
  readonly #saved = new Map<Method, PropertyDescriptor | undefined>()
  #resolve!: (response: Response) => void
  #reject!: (error: unknown) => void
  #headSent = false
  #statusText = ''
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined
  #wake: (() => void) | undefined
  #queue: Pending[] = []
  #queued = 0
  #needDrain = false
  #ended = false
  /** Nobody reads the body any more: writes are dropped. */
  #discarding = false
  /** The block's answer was written (or is being written). */
  #answered = false

  /** `head`: the request is HEAD, and the Response gets no body. */
  constructor(res: ServerResponse, head: boolean) {
    this.#res = res
    this.#bodyless = head
    this.#preset = new Set(res.getHeaderNames())
    this.response = new Promise((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
    // A block that never awaits its `next` must not leave an unhandled rejection behind.
    this.response.catch(() => undefined)
    this.sink = {
      writeHead: res.writeHead.bind(res),
      write: res.write.bind(res),
      end: res.end.bind(res),
      flushHeaders: res.flushHeaders.bind(res),
    } as ResponseSink
    const realHeadersSent = inheritedGetter(res, 'headersSent')
    for (const name of METHODS) this.#saved.set(name, Object.getOwnPropertyDescriptor(res, name))
    const capture = this
    Object.defineProperties(res, {
      writeHead: { configurable: true, writable: true, value: this.#writeHead },
      write: { configurable: true, writable: true, value: this.#write },
      end: { configurable: true, writable: true, value: this.#end },
      flushHeaders: { configurable: true, writable: true, value: this.#flushHeaders },
      // What the downstream sees: sent once its header section was captured; the real state
      // once the block's answer is being written.
      headersSent: {
        configurable: true,
        get(this: ServerResponse) {
          if (capture.#headSent && !capture.#answered) return true
          return realHeadersSent?.call(this) === true
        },
      },
    })
    // The client left, or something destroyed the response: nobody will read the rest.
    res.once('close', () => {
      if (!this.#ended) this.#abort(new Error('The response closed before the downstream ended.'))
    })
  }

  readonly #writeHead = (status: number, reason?: unknown, headers?: unknown): ServerResponse => {
    const res = this.#res
    // A second call (libraries that test `res._header`, which stays unset here) is ignored.
    if (this.#headSent) return res
    if (typeof reason === 'string') this.#statusText = reason
    else headers = reason
    res.statusCode = status
    setHeaders(res, headers)
    this.#captureHead()
    return res
  }

  readonly #write = (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
    if (typeof encoding === 'function') callback = encoding
    const bytes = chunkOf(chunk, encoding)
    this.#implicitHead()
    return this.#push(bytes, typeof callback === 'function' ? (callback as Callback) : undefined)
  }

  readonly #end = (chunk?: unknown, encoding?: unknown, callback?: unknown): ServerResponse => {
    const res = this.#res
    if (typeof chunk === 'function') callback = chunk
    else if (typeof encoding === 'function') callback = encoding
    const bytes =
      chunk == null || typeof chunk === 'function' ? undefined : chunkOf(chunk, encoding)
    this.#implicitHead()
    if (this.#ended) return res
    if (bytes !== undefined) this.#push(bytes, undefined)
    this.#ended = true
    if (typeof callback === 'function') {
      const done = callback as Callback
      if (res.writableFinished) process.nextTick(done)
      else res.once('finish', () => done())
    }
    this.#flush()
    if (this.#answered) this.#detach()
    return res
  }

  readonly #flushHeaders = (): void => {
    this.#implicitHead()
  }

  // As node's `_implicitHeader`: through the instance's writeHead, so that wrappers the
  // downstream installed on top of this one (on-headers) see it.
  #implicitHead(): void {
    if (!this.#headSent) this.#res.writeHead(this.#res.statusCode)
  }

  #captureHead(): void {
    this.#headSent = true
    const res = this.#res
    const status = res.statusCode
    const statusText = this.#statusText || (res.statusMessage ?? '')
    // Fetch "null body status", and HEAD: no body (node:http drops such writes too).
    const bodyless = this.#bodyless || status === 204 || status === 205 || status === 304
    if (bodyless) this.#discarding = true
    const body = bodyless
      ? null
      : new ReadableStream<Uint8Array>(
          {
            start: (controller) => {
              this.#controller = controller
            },
            pull: () => this.#pull(),
            cancel: () => this.#discard(),
          },
          { highWaterMark: 0 },
        )
    try {
      const init = { status, headers: headersOf(res) }
      let response: Response
      try {
        response = new NativeResponse(body, { ...init, statusText })
      } catch (error) {
        // A reason phrase Fetch refuses is dropped; anything else (a status below 200) fails.
        if (statusText === '') throw error
        response = new NativeResponse(body, init)
      }
      this.#resolve(response)
    } catch (error) {
      this.#discarding = true
      this.#reject(error)
    }
  }

  #push(chunk: Uint8Array, callback: Callback | undefined): boolean {
    if (this.#ended) return false
    if (this.#discarding || chunk.byteLength === 0) {
      if (callback !== undefined) process.nextTick(callback)
      return true
    }
    this.#queue.push({ chunk, callback })
    this.#queued += chunk.byteLength
    this.#flush()
    if (this.#queued < HIGH_WATER_MARK) return true
    this.#needDrain = true
    return false
  }

  #pull(): Promise<void> | undefined {
    if (this.#deliver()) return undefined
    return new Promise((resolve) => {
      this.#wake = resolve
    })
  }

  // Hands the reader a waiting chunk, or the end; false when there is nothing yet.
  #deliver(): boolean {
    const controller = this.#controller
    if (controller === undefined) return true
    const next = this.#queue.shift()
    if (next !== undefined) {
      this.#queued -= next.chunk.byteLength
      controller.enqueue(next.chunk)
      if (next.callback !== undefined) process.nextTick(next.callback)
      if (this.#needDrain && this.#queued < HIGH_WATER_MARK) {
        this.#needDrain = false
        // Not from inside the reader's read(): the downstream writes again on 'drain'.
        process.nextTick(() => this.#res.emit('drain'))
      }
      return true
    }
    if (!this.#ended) return false
    this.#controller = undefined
    controller.close()
    return true
  }

  // A pull waiting for data gets what just arrived.
  #flush(): void {
    const wake = this.#wake
    if (wake === undefined) return
    if (this.#deliver()) {
      this.#wake = undefined
      wake()
    }
  }

  // The reader cancelled the body (the block dropped it, or the client left): drop the rest.
  #discard(): void {
    this.#discarding = true
    this.#controller = undefined
    for (const { callback } of this.#queue.splice(0)) {
      if (callback !== undefined) process.nextTick(callback)
    }
    this.#queued = 0
    if (this.#needDrain) {
      this.#needDrain = false
      process.nextTick(() => this.#res.emit('drain'))
    }
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }

  #abort(error: Error): void {
    if (!this.#headSent) this.#reject(error)
    const controller = this.#controller
    this.#discard()
    controller?.error(error)
  }

  /**
   * Makes the response ready for the block's answer: the header fields the downstream set
   * are in its Response already (when it got that far) and are removed, so that what is
   * written is exactly the block's answer; fields set before the middleware ran stay when the
   * downstream never answered. Returns the methods to write with.
   */
  answer(): ResponseSink {
    const res = this.#res
    this.#answered = true
    for (const name of res.getHeaderNames()) {
      if (this.#headSent || !this.#preset.has(name)) res.removeHeader(name)
    }
    // A reason phrase left from the downstream would otherwise go out with the block's status.
    res.statusMessage = ''
    return this.sink
  }

  /** The block's answer is written: whatever the downstream still writes is dropped. */
  answered(): void {
    if (this.#ended) this.#detach()
    else this.#discard()
  }

  // Puts back what the instance had (only what is still ours).
  #detach(): void {
    const res = this.#res as unknown as Record<Method, unknown>
    const ours: Record<Method, unknown> = {
      writeHead: this.#writeHead,
      write: this.#write,
      end: this.#end,
      flushHeaders: this.#flushHeaders,
      headersSent: undefined,
    }
    for (const [name, descriptor] of this.#saved) {
      const current = Object.getOwnPropertyDescriptor(res, name)
      const mine =
        name === 'headersSent' ? current?.get !== undefined : current?.value === ours[name]
      if (!mine) continue
      if (descriptor === undefined) delete res[name]
      else Object.defineProperty(res, name, descriptor)
    }
    this.#saved.clear()
  }
}
