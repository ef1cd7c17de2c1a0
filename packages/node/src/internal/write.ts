/**
 * Writing a Fetch Response to a node:http ServerResponse: status, every header field (each
 * Set-Cookie on its own line), and the body, whole or streamed with backpressure.
 *
 * @module
 */
import type { ServerResponse } from 'node:http'
import { NodeAdapterError } from '../errors.ts'
import { takeResponseParts } from './fast-response.ts'

/**
 * The writing methods of a ServerResponse: the response itself, or (the middleware form) the
 * methods it had before a capture of the downstream's writes replaced them.
 */
export type ResponseSink = Pick<ServerResponse, 'writeHead' | 'write' | 'end' | 'flushHeaders'>

interface Head {
  status: number
  statusText: string
  /** `[name, value, …]` for `writeHead`, which keeps repeated names as separate lines. */
  flat: string[]
  hasLength: boolean
}

/**
 * Writes `response` to `res` through `sink` (default: `res` itself); HEAD (`head`) writes the
 * header section only. Returns nothing when the body went out in one synchronous `end()`, a
 * promise when it streams.
 *
 * On failure it throws (or rejects): when `res.headersSent` is still false the caller may
 * answer an error instead; otherwise the caller must destroy the socket, since a
 * half-written body cannot be taken back.
 */
export function writeResponse(
  res: ServerResponse,
  response: Response,
  head: boolean,
  sink: ResponseSink = res,
): Promise<void> | undefined {
  if (res.destroyed) {
    // The client left while the handler worked: nobody reads this body; stop its producer.
    const parts = takeResponseParts(response)
    const body = parts === undefined ? (response.bodyUsed ? null : response.body) : parts.body
    if (body instanceof ReadableStream) void body.cancel().catch(ignore)
    return undefined
  }
  const parts = takeResponseParts(response)
  if (parts === undefined) return writeNative(res, sink, response, head)
  const { body, plain, headers, defaultType } = parts
  let meta: Head
  if (headers !== undefined) meta = headOf(parts.status, parts.statusText, headers)
  else {
    meta = {
      status: parts.status,
      statusText: parts.statusText,
      flat: plain === undefined ? [] : plain.flat.slice(),
      hasLength: plain?.hasContentLength ?? false,
    }
    if (defaultType !== null && !plain?.hasContentType) meta.flat.push('content-type', defaultType)
  }
  if (body instanceof ReadableStream) return writeStream(res, sink, meta, body, head)
  // HEAD with no body and no Content-Length (methods() dropped a GET body it could not
  // measure): no length at all, never a false 0 (RFC 9110 §8.6, §9.3.2).
  writeWhole(sink, meta, head ? null : body, head && body === null ? undefined : byteLength(body))
  return undefined
}

function writeNative(
  res: ServerResponse,
  sink: ResponseSink,
  response: Response,
  head: boolean,
): Promise<void> | undefined {
  if (response.bodyUsed) {
    throw new NodeAdapterError('RESPONSE_BODY_USED', 'The response body was already read.')
  }
  const meta = headOf(response.status, response.statusText, response.headers)
  const body = response.body
  if (body !== null) return writeStream(res, sink, meta, body, head)
  writeWhole(sink, meta, null, head ? undefined : 0)
  return undefined
}

function headOf(status: number, statusText: string, headers: Headers): Head {
  const flat: string[] = []
  let hasLength = false
  // Headers iteration yields each Set-Cookie on its own (Fetch "sort and combine").
  for (const [name, value] of headers) {
    if (name === 'content-length') hasLength = true
    flat.push(name, value)
  }
  return { status, statusText, flat, hasLength }
}

function byteLength(body: string | Uint8Array | null): number {
  if (body === null) return 0
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
}

// RFC 9110 §8.6: no Content-Length on 1xx and 204 (and on 304 only the GET's, unknown here).
function withoutLength(status: number): boolean {
  return status < 200 || status === 204 || status === 304
}

function writeWhole(
  sink: ResponseSink,
  meta: Head,
  body: string | Uint8Array | null,
  length: number | undefined,
): void {
  if (!meta.hasLength && length !== undefined && !withoutLength(meta.status)) {
    meta.flat.push('content-length', `${length}`)
  }
  writeHead(sink, meta)
  if (body === null) sink.end()
  else sink.end(body)
}

function writeHead(sink: ResponseSink, meta: Head): void {
  if (meta.statusText === '') sink.writeHead(meta.status, meta.flat)
  else sink.writeHead(meta.status, meta.statusText, meta.flat)
}

const NOT_READY: unique symbol = Symbol('not ready')
const EAGER_READS = 8

// Resolves after the microtasks a stream needs to hand over a chunk it already holds.
function notReady(): Promise<typeof NOT_READY> {
  return Promise.resolve()
    .then(() => undefined)
    .then(() => NOT_READY)
}

async function writeStream(
  res: ServerResponse,
  sink: ResponseSink,
  meta: Head,
  body: ReadableStream<Uint8Array>,
  head: boolean,
): Promise<void> {
  const reader = body.getReader()
  const onClose = (): void => {
    // The client went away: stop the producer (its cancel() runs) and end the read loop.
    if (!res.writableFinished) {
      reader
        .cancel(new DOMException('The client closed the connection.', 'AbortError'))
        .catch(ignore)
    }
  }
  res.once('close', onClose)
  try {
    let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined = reader.read()
    const ready: Uint8Array[] = []
    if (!meta.hasLength) {
      // A body the stream already holds (a string or bytes Response) goes out with a
      // Content-Length instead of chunked framing.
      for (let i = 0; i < EAGER_READS; i++) {
        const result = await Promise.race([pending, notReady()])
        if (result === NOT_READY) break
        if (result.done) {
          const whole = ready.length === 1 ? ready[0]! : Buffer.concat(ready)
          // RFC 9110 §9.3.2: HEAD answers the header section GET would, length included.
          writeWhole(sink, meta, head ? null : whole, whole.byteLength)
          return
        }
        ready.push(chunkOf(result.value))
        pending = reader.read()
      }
    }
    if (head) {
      // A body not ready at once: HEAD states a length only when the handler did.
      reader.cancel().catch(ignore)
      writeWhole(sink, meta, null, undefined)
      return
    }
    writeHead(sink, meta)
    // Send the header section now: a slow stream (server-sent events) must not hold it back.
    if (ready.length === 0) sink.flushHeaders()
    for (const chunk of ready) if (chunk.byteLength > 0) sink.write(chunk)
    for (;;) {
      const result = await (pending ?? reader.read())
      pending = undefined
      if (result.done || res.destroyed) break
      const chunk = chunkOf(result.value)
      if (chunk.byteLength > 0 && !sink.write(chunk)) await drained(res)
    }
    if (!res.destroyed) sink.end()
  } catch (error) {
    reader.cancel(error).catch(ignore)
    throw error
  } finally {
    res.off('close', onClose)
  }
}

function chunkOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value
  throw new NodeAdapterError('INVALID_BODY_CHUNK', 'A response body chunk is not a Uint8Array.')
}

// Backpressure: wait until the socket takes more, or is gone.
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

function ignore(): void {}
