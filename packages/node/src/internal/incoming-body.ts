/**
 * The request body as a Fetch `ReadableStream`, pulled from the IncomingMessage one chunk at a
 * time so the socket is only read as fast as the handler reads (backpressure), and nothing
 * is read at all until the handler asks.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { NodeAdapterError } from '../errors.ts'

/**
 * How much of an abandoned request body is read and thrown away so the connection can be
 * reused. Past it the socket is closed. node:http itself drains without a bound.
 */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024

/**
 * A stream of the request body. When the handler cancels it (a body limit) or the response
 * finishes before it was read to the end, the rest is discarded, up to
 * {@link DISCARD_LIMIT_BYTES}.
 */
export function incomingBody(
  req: IncomingMessage,
  res: ServerResponse,
): ReadableStream<Uint8Array> {
  let controller: ReadableStreamDefaultController<Uint8Array>
  let started = false
  let settled = false

  const onData = (chunk: Buffer): void => {
    controller.enqueue(chunk)
    // highWaterMark 0: hold the socket until the handler asks for the next chunk.
    if ((controller.desiredSize ?? 0) <= 0) req.pause()
  }
  const onEnd = (): void => {
    settle()
    controller.close()
  }
  const onError = (error: Error): void => {
    settle()
    controller.error(
      new NodeAdapterError('REQUEST_ABORTED', 'The request body was interrupted.', {
        cause: error,
      }),
    )
  }
  const onClose = (): void => {
    if (!settled) onError(new Error('The connection closed before the request body ended.'))
  }
  const onResponseFinish = (): void => {
    if (settled) return
    settle()
    controller.error(new NodeAdapterError('REQUEST_ABORTED', 'The response was already sent.'))
    discard(req)
  }
  const settle = (): void => {
    settled = true
    req.off('data', onData)
    req.off('end', onEnd)
    req.off('error', onError)
    req.off('close', onClose)
    res.off('finish', onResponseFinish)
  }

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c
      },
      pull() {
        if (!started) {
          started = true
          if (req.readableEnded) {
            settled = true
            controller.error(
              new NodeAdapterError(
                'REQUEST_BODY_CONSUMED',
                'The request body was already read by something else (a body parser?).',
              ),
            )
            return
          }
          req.on('data', onData)
          req.on('end', onEnd)
          req.on('error', onError)
          req.on('close', onClose)
          res.on('finish', onResponseFinish)
        }
        req.resume()
      },
      cancel() {
        if (settled) return
        settle()
        discard(req)
      },
    },
    { highWaterMark: 0 },
  )
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
