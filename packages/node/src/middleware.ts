/**
 * The middleware form: an api-blocks `Middleware` in front of a node-based framework's own
 * handlers (Express, Connect, any `(req, res, next)` stack). The block sees a Request; when it
 * answers itself, that answer is written; when it calls its `next`, the framework's `next()`
 * runs the later handlers, and what they send comes back to the block as a Response, which the
 * block may change before it is written.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Middleware } from '@api-blocks/core'
import { readRequestBody } from '@api-blocks/core'
import { DownstreamCapture } from './internal/capture.ts'
import {
  bodySourceOf,
  checkResponse,
  createRequest,
  problemFor,
  send,
} from './internal/exchange.ts'
import { IncomingBody } from './internal/incoming-body.ts'
import type { NodeRequestOptions } from './options.ts'

/**
 * Runs `middleware` for one request of a `(req, res, next)` framework. Never rejects.
 *
 * - The block answers itself (a 429, a 304, a cached replay): that Response is written, and
 *   `passOn` is never called. Header fields set on `res` before are sent too (the
 *   Response wins a conflict).
 * - The block calls its `next(request)`: `passOn()` (the framework's `next`) runs the later
 *   handlers, with `res.writeHead`/`write`/`end` captured, and the block's `next` resolves to
 *   a Response of the status, the header fields (those set before included) and the body they
 *   send, streamed with backpressure. What the block answers then is written, exactly. Its
 *   `next` runs the framework once; a second call rejects.
 * - The request body, for the later handlers: a body the block never read stays on the
 *   socket for them. A body the block read to its end is put back into the IncomingMessage
 *   as the body of the request the block handed on (its bytes, held in memory), so a body
 *   parser (`express.json()`) reads it as if unread; Content-Length follows the bytes. A body
 *   read part way, or consumed and not handed on, is lost to them.
 * - A thrown error answers its problem (`errorToProblemResponse`); 5xx go to `onError`.
 *
 * @example
 * ```ts
 * // A Connect-style middleware of your own framework:
 * const use = (middleware: Middleware) => (req: IncomingMessage, res: ServerResponse, next: () => void) => {
 *   void handleNodeMiddleware(middleware, req, res, next, { target: req.url })
 * }
 * ```
 */
export async function handleNodeMiddleware(
  middleware: Middleware,
  req: IncomingMessage,
  res: ServerResponse,
  passOn: () => void,
  options: NodeRequestOptions = {},
): Promise<void> {
  const head = req.method === 'HEAD'
  let request: Request | undefined
  let body: IncomingBody | undefined
  let capture: DownstreamCapture | undefined
  let calls = 0
  let settled = false
  let response: Response
  try {
    if (options.body === undefined && req.method !== 'GET' && !head) {
      // The end of the body is held back, so the bytes can go back for the framework.
      body = new IncomingBody(req, res, true)
    }
    request = createRequest(req, res, options, body?.stream ?? bodySourceOf(options.body))
    const next = async (forwarded: Request): Promise<Response> => {
      if (++calls > 1 || settled) {
        throw new TypeError(
          'The framework runs once per request: call next() once, before answering.',
        )
      }
      if (body !== undefined) {
        await body.handOver(body.readToEnd ? await bytesOf(forwarded) : undefined)
      }
      capture = new DownstreamCapture(res, head)
      passOn()
      return capture.response
    }
    response = checkResponse(await middleware(request, next))
  } catch (error) {
    response = problemFor(error, request, options)
  }
  settled = true
  await send(res, response, head, options, request, capture?.answer())
  capture?.answered()
  body?.release()
}

// The body of the request the block handed on, to put back for the framework; undefined when
// it cannot be read (used already, or failing).
function bytesOf(request: Request): Promise<Uint8Array | undefined> {
  return readRequestBody(request, { maxBytes: Number.MAX_SAFE_INTEGER, consume: false }).catch(
    () => undefined,
  )
}
