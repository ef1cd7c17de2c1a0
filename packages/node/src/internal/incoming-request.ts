/**
 * The Request a handler receives. undici's constructor costs about 10 µs with headers and a
 * signal; this class answers `method` and `url` from two strings and builds everything else
 * (Headers, the AbortSignal, the body stream) on first use. It inherits from the native
 * prototype, so `instanceof Request` holds, and the installed global `Request` unwraps it,
 * so `new Request(request, init)` works as it does natively.
 *
 * @module
 */
import { Buffer } from 'node:buffer'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { defineBodySlots } from '@api-blocks/core'
import { isDisturbed } from './disturbed.ts'
import { incomingBody, readIncomingBody } from './incoming-body.ts'
import { NativeRequest, NativeResponse } from './native.ts'

/**
 * The body the handler reads: the IncomingMessage itself (`undefined`), bytes a framework
 * already read, or a stream standing in for them.
 */
export type BodySource = Uint8Array | ReadableStream<Uint8Array> | undefined

let rebodyIncomingRequest: (request: unknown, body: Uint8Array) => IncomingRequest | undefined
let toNativeRequest: (request: unknown, withBody: boolean) => Request | undefined
let wholeBodyOf: (request: IncomingRequest) => Uint8Array | undefined
let restoreBodyOf: (request: IncomingRequest, bytes: Uint8Array) => boolean
let readIncomingOf: (request: IncomingRequest, maxBytes: number) => Promise<Uint8Array> | undefined

const EMPTY: Uint8Array = new Uint8Array(0)

const utf8 = new TextDecoder()

/** The lazily built Request of one node:http request. */
export class IncomingRequest {
  readonly #req: IncomingMessage
  readonly #res: ServerResponse
  readonly #method: string
  readonly #url: string
  #source: BodySource
  #headers: Headers | undefined
  #abort: AbortController | undefined
  #body: ReadableStream<Uint8Array> | null | undefined
  /** The byte source was read whole by a body method, without a stream. */
  #consumed = false
  /** The byte source was handed over through the restore-body slot: no one else holds it. */
  #owned = false

  constructor(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    url: string,
    source: BodySource,
  ) {
    this.#req = req
    this.#res = res
    this.#method = method
    this.#url = url
    this.#source = source
  }

  get method(): string {
    return this.#method
  }

  get url(): string {
    return this.#url
  }

  get headers(): Headers {
    this.#headers ??= headersOf(this.#req)
    return this.#headers
  }

  get signal(): AbortSignal {
    this.#abort ??= abortOnDisconnect(this.#res)
    return this.#abort.signal
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.#body === undefined) {
      this.#body = hasNoBody(this.#method)
        ? null
        : // Read whole already (perhaps straight from the IncomingMessage): a stream of its own.
          bodyStream(this.#req, this.#res, this.#consumed ? EMPTY : this.#source)
      // Read whole already: the stream reads as used, as the native one would.
      if (this.#consumed && this.#body !== null) void this.#body.getReader().read()
    }
    return this.#body
  }

  get bodyUsed(): boolean {
    if (this.#consumed) return true
    const body = this.#body
    return body !== undefined && body !== null && isDisturbed(body)
  }

  // What undici answers for a Request made from a URL and an init without these members.
  get cache(): RequestCache {
    return 'default'
  }
  get credentials(): RequestCredentials {
    return 'same-origin'
  }
  get destination(): RequestDestination {
    return ''
  }
  get integrity(): string {
    return ''
  }
  get keepalive(): boolean {
    return false
  }
  get mode(): RequestMode {
    return 'cors'
  }
  get redirect(): RequestRedirect {
    return 'follow'
  }
  get referrer(): string {
    return 'about:client'
  }
  get referrerPolicy(): ReferrerPolicy {
    return ''
  }
  get duplex(): 'half' {
    return 'half'
  }
  get isReloadNavigation(): boolean {
    return false
  }
  get isHistoryNavigation(): boolean {
    return false
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    const whole = this.#takeWhole()
    if (whole !== undefined) return Promise.resolve(new Uint8Array(whole).buffer)
    const read = this.#readIncoming()
    if (read !== undefined) return read.then((bytes) => new Uint8Array(bytes).buffer)
    return this.#consume((body) => body.arrayBuffer())
  }

  blob(): Promise<Blob> {
    return this.#consume((body) => body.blob())
  }

  bytes(): Promise<Uint8Array<ArrayBuffer>> {
    const whole = this.#takeWhole()
    if (whole !== undefined) {
      // Bytes given up to this request, in a buffer of their own, go out as they are: the
      // copy Fetch makes only protects bytes someone else still holds.
      const own =
        this.#owned && whole.byteOffset === 0 && whole.byteLength === whole.buffer.byteLength
      return Promise.resolve(own ? whole : new Uint8Array(whole))
    }
    const read = this.#readIncoming()
    if (read !== undefined) return read.then((bytes) => new Uint8Array(bytes))
    return this.#consume((body) => body.bytes())
  }

  formData(): Promise<FormData> {
    return this.#consume((body) => body.formData())
  }

  json(): Promise<unknown> {
    const whole = this.#takeWhole()
    if (whole !== undefined) {
      try {
        return Promise.resolve(JSON.parse(utf8.decode(whole)))
      } catch (error) {
        return Promise.reject(error)
      }
    }
    const read = this.#readIncoming()
    if (read !== undefined) return read.then((bytes) => JSON.parse(utf8.decode(bytes)))
    return this.#consume((body) => body.json())
  }

  text(): Promise<string> {
    const whole = this.#takeWhole()
    if (whole !== undefined) return Promise.resolve(utf8.decode(whole))
    const read = this.#readIncoming()
    if (read !== undefined) return read.then((bytes) => utf8.decode(bytes))
    return this.#consume((body) => body.text())
  }

  // Bytes a framework or a middleware already read, taken whole without building a stream
  // (Fetch "fully read body" gives the same bytes; text() decodes them as UTF-8 with the BOM
  // removed and errors replaced, as TextDecoder does). Marks the body used.
  #takeWhole(): Uint8Array<ArrayBuffer> | undefined {
    const whole = wholeBodyOf(this)
    if (whole === undefined) return undefined
    this.#consumed = true
    return whole as Uint8Array<ArrayBuffer>
  }

  // The body read whole straight from the IncomingMessage, without the stream, the native
  // Response and the Headers that reading through them costs (see readIncomingBody): when it
  // has a Content-Length and nothing read it yet. Marks the body used. The bytes may be a
  // view into Node's Buffer pool: the body methods copy them out.
  #readIncoming(maxBytes = Number.POSITIVE_INFINITY): Promise<Uint8Array> | undefined {
    if (
      this.#source !== undefined ||
      this.#body !== undefined ||
      this.#consumed ||
      hasNoBody(this.#method)
    ) {
      return undefined
    }
    const read = readIncomingBody(this.#req, this.#res, maxBytes)
    if (read !== undefined) this.#consumed = true
    return read
  }

  // The Body mixin's readers, borrowed from a native Response over the same stream: same
  // UTF-8 decoding, JSON parsing, multipart parsing and "Body is unusable" errors.
  #consume<T>(read: (body: Response) => Promise<T>): Promise<T> {
    try {
      if (this.bodyUsed) throw new TypeError('Body is unusable: Body has already been read')
      const type = this.body === null ? null : this.headers.get('content-type')
      return read(
        new NativeResponse(this.body, type === null ? {} : { headers: { 'content-type': type } }),
      )
    } catch (error) {
      return Promise.reject(error)
    }
  }

  clone(): Request {
    if (this.bodyUsed) throw new TypeError('Request.clone: Body has already been consumed.')
    let body: ReadableStream<Uint8Array> | null = this.body
    if (body !== null) {
      // Fetch "clone a body": tee, keep one branch, give the other away.
      const [mine, theirs] = body.tee()
      this.#body = mine
      body = theirs
    }
    return this.#native(body)
  }

  #native(body: ReadableStream<Uint8Array> | null): Request {
    return new NativeRequest(this.#url, {
      method: this.#method,
      headers: this.headers,
      body,
      duplex: 'half',
      signal: this.signal,
    } as RequestInit)
  }

  static {
    wholeBodyOf = (request) =>
      request.#source instanceof Uint8Array &&
      request.#body === undefined &&
      !request.#consumed &&
      !hasNoBody(request.#method)
        ? request.#source
        : undefined
    restoreBodyOf = (request, bytes) => {
      if (!(bytes instanceof Uint8Array) || hasNoBody(request.#method) || !request.bodyUsed) {
        return false
      }
      request.#source = bytes
      request.#body = undefined
      request.#consumed = false
      request.#owned = true
      return true
    }
    readIncomingOf = (request, maxBytes) => request.#readIncoming(maxBytes)
    rebodyIncomingRequest = (request, body) => {
      if (typeof request !== 'object' || request === null || !(#url in request)) return undefined
      // GET and HEAD cannot have a body: the native constructor throws the TypeError Fetch asks for.
      if (hasNoBody(request.#method)) return undefined
      // Fetch "extract a body": the bytes are copied, so later changes to the caller's array
      // do not reach the request.
      const copy = new IncomingRequest(
        request.#req,
        request.#res,
        request.#method,
        request.#url,
        // A copy in Node's Buffer pool (a fraction of the cost of a buffer of its own). It
        // never leaves this class as it is: the body methods copy it out, and the whole-body
        // slot is read through byteOffset and byteLength.
        Buffer.from(body),
      )
      // Headers already read (and perhaps changed) travel as a copy, as new Request() copies them.
      if (request.#headers !== undefined) copy.#headers = new Headers(request.#headers)
      return copy
    }
    toNativeRequest = (request, withBody) => {
      if (typeof request !== 'object' || request === null || !(#url in request)) return undefined
      if (withBody && request.bodyUsed) {
        throw new TypeError(
          'Cannot construct a Request with a Request object that has already been used.',
        )
      }
      return request.#native(withBody ? request.body : null)
    }
  }
}

Object.setPrototypeOf(IncomingRequest.prototype, NativeRequest.prototype)
// The body hand-offs of core. `wholeBodyOf`: bytes a framework or a middleware already read,
// taken without a stream (`readBody` of `@api-blocks/http`, the idempotency middleware).
// `restoreBody`: a middleware that read the whole body (the idempotency middleware reads it to
// fingerprint it) hands the bytes back, and this same request holds them whole again, as if a
// framework had read them: the body reads as unused, its methods answer from the bytes and
// `wholeBodyOf` answers them, so the middleware passes the request itself on instead of
// building a copy with `new Request(request, { body })` (a Request, a copy of the headers and
// of the bytes, per request). It takes the bytes only once the body was read, and never on
// GET or HEAD. The bytes are kept as they are: `bytes()` hands them out without a copy when
// they fill a buffer of their own (a view into a larger buffer is still copied).
defineBodySlots(IncomingRequest.prototype, {
  wholeBody(this: IncomingRequest) {
    return wholeBodyOf(this)
  },
  restoreBody(this: IncomingRequest, bytes: Uint8Array) {
    return restoreBodyOf(this, bytes)
  },
  // core's readRequestBody, below its Content-Length check: a body framed by a Content-Length
  // within the limit, read straight from the IncomingMessage (see readIncomingBody); node:http
  // delivers no more than it. `undefined` sends core down the stream.
  // `npm run bench -- oauth` (`POST /token`, a 50-byte form): see docs/benchmarks.md, issue 14.
  readWholeBody(this: IncomingRequest, maxBytes: number) {
    return readIncomingOf(this, maxBytes)
  },
})

/**
 * `new Request(incomingRequest, { body: bytes })` without leaving the lightweight path: the same
 * method, URL, headers and abort signal, the given bytes as the body. What middleware that read
 * the body and hands it on (the idempotency block) builds on every request; the native detour
 * would cost a full undici Request. `undefined` for anything but an {@link IncomingRequest}.
 */
export function rebodyRequest(request: unknown, body: Uint8Array): IncomingRequest | undefined {
  return rebodyIncomingRequest(request, body)
}

/**
 * The native Request equivalent of an {@link IncomingRequest} (its body moves over unless
 * `withBody` is false, when the caller supplies another); `undefined` for anything else.
 */
export function unwrapIncomingRequest(request: unknown, withBody: boolean): Request | undefined {
  return toNativeRequest(request, withBody)
}

/** A native Request for one node:http request, for when the lightweight one is turned off. */
export function nativeIncomingRequest(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  url: string,
  source: BodySource,
): Request {
  return new NativeRequest(url, {
    method,
    headers: headersOf(req),
    body: hasNoBody(method) ? null : bodyStream(req, res, source),
    duplex: 'half',
    signal: abortOnDisconnect(res).signal,
  } as RequestInit)
}

// GET and HEAD by Fetch's rule; CONNECT because what follows its header section is tunnel
// data, not content (RFC 9110 §9.3.6), and node:http has stopped parsing the socket.
function hasNoBody(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'CONNECT'
}

// Every field line as sent, repeated names included (node's `req.headers` drops some repeats).
function headersOf(req: IncomingMessage): Headers {
  const raw = req.rawHeaders
  const headers = new Headers()
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!)
  return headers
}

function bodyStream(
  req: IncomingMessage,
  res: ServerResponse,
  source: BodySource,
): ReadableStream<Uint8Array> {
  if (source === undefined) return incomingBody(req, res)
  if (source instanceof ReadableStream) return source
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // A chunk of its own: the source may be a view into Node's Buffer pool (a re-bodied
      // request), whose `.buffer` holds other requests' bytes.
      if (source.byteLength > 0) controller.enqueue(new Uint8Array(source))
      controller.close()
    },
  })
}

// The response's 'close' before 'finish' means the client went away.
function abortOnDisconnect(res: ServerResponse): AbortController {
  const abort = new AbortController()
  if (res.writableFinished) return abort
  // node sets `destroyed` when it emits 'close'; it may already have happened.
  if (res.destroyed) abort.abort()
  else {
    res.once('close', () => {
      if (!res.writableFinished) abort.abort()
    })
  }
  return abort
}
