/**
 * Writing a Fetch Response to a node:http ServerResponse: status, every header field (each
 * Set-Cookie on its own line), and the body, whole or streamed with backpressure.
 *
 * @module
 */
import type { ServerResponse } from 'node:http'
import { NodeAdapterError } from '../errors.ts'
import { takeResponseParts } from './fast-response.ts'

interface Head {
  status: number
  statusText: string
  /** `[name, value, …]` for `writeHead`, which keeps repeated names as separate lines. */
  flat: string[]
  hasLength: boolean
}

/**
 * Writes `response` to `res`; HEAD (`head`) writes the header section only. Returns nothing
 * when the body went out in one synchronous `end()`, a promise when it streams.
 *
 * On failure it throws (or rejects): when `res.headersSent` is still false the caller may
 * answer an error instead; otherwise the caller must destroy the socket, since a
 * half-written body cannot be taken back.
 */
export function writeResponse(
  res: ServerResponse,
  response: Response,
  head: boolean,
): Promise<void> | undefined {
  if (res.destroyed) {
    // The client left while the handler worked: nobody reads this body; stop its producer.
    const parts = takeResponseParts(response)
    const body = parts === undefined ? (response.bodyUsed ? null : response.body) : parts.body
    if (body instanceof ReadableStream) void body.cancel().catch(ignore)
    return undefined
  }
  const parts = takeResponseParts(response)
  if (parts === undefined) return writeNative(res, response, head)
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
  if (body instanceof ReadableStream) {
    if (!head) return writeStream(res, meta, body)
    void body.cancel().catch(ignore)
    writeWhole(res, meta, null, undefined)
  } else writeWhole(res, meta, head ? null : body, byteLength(body))
  return undefined
}

function writeNative(
  res: ServerResponse,
  response: Response,
  head: boolean,
): Promise<void> | undefined {
  if (response.bodyUsed) {
    throw new NodeAdapterError('RESPONSE_BODY_USED', 'The response body was already read.')
  }
  const meta = headOf(response.status, response.statusText, response.headers)
  const body = response.body
  if (body === null) writeWhole(res, meta, null, 0)
  else if (!head) return writeStream(res, meta, body)
  else {
    // RFC 9110 §9.3.2: HEAD answers the GET header section; the length is only known when
    // the handler stated it.
    void body.cancel().catch(ignore)
    writeWhole(res, meta, null, undefined)
  }
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
  res: ServerResponse,
  meta: Head,
  body: string | Uint8Array | null,
  length: number | undefined,
): void {
  if (!meta.hasLength && length !== undefined && !withoutLength(meta.status)) {
    meta.flat.push('content-length', `${length}`)
  }
  writeHead(res, meta)
  if (body === null) res.end()
  else res.end(body)
}

function writeHead(res: ServerResponse, meta: Head): void {
  if (meta.statusText === '') res.writeHead(meta.status, meta.flat)
  else res.writeHead(meta.status, meta.statusText, meta.flat)
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
  meta: Head,
  body: ReadableStream<Uint8Array>,
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
          writeWhole(res, meta, whole, whole.byteLength)
          return
        }
        ready.push(chunkOf(result.value))
        pending = reader.read()
      }
    }
    writeHead(res, meta)
    // Send the header section now: a slow stream (server-sent events) must not hold it back.
    if (ready.length === 0) res.flushHeaders()
    for (const chunk of ready) if (chunk.byteLength > 0) res.write(chunk)
    for (;;) {
      const result = await (pending ?? reader.read())
      pending = undefined
      if (result.done || res.destroyed) break
      const chunk = chunkOf(result.value)
      if (chunk.byteLength > 0 && !res.write(chunk)) await drained(res)
    }
    if (!res.destroyed) res.end()
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
