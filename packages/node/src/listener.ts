/**
 * Serving a Fetch handler from node:http: IncomingMessage in, Request to the handler,
 * Response back out to the ServerResponse. A handler that throws answers a problem; nothing
 * it does can crash the process.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from 'node:http'
import { errorToProblemResponse } from '@api-blocks/problem-details'
import { recordClient } from './client-address.ts'
import { NodeAdapterError } from './errors.ts'
import type { Handler } from './handler.ts'
import { NativeResponse } from './internal/fast-response.ts'
import { installFastGlobals } from './internal/globals.ts'
import type { BodySource } from './internal/incoming-request.ts'
import { IncomingRequest, nativeIncomingRequest } from './internal/incoming-request.ts'
import { requestUrl } from './internal/url.ts'
import { writeResponse } from './internal/write.ts'

/** Options of {@link toNodeListener} and every adapter built on it. */
export interface NodeAdapterOptions {
  /**
   * Take the scheme and host from X-Forwarded-Proto and X-Forwarded-Host (their first
   * value). Only turn this on behind a proxy that sets both and strips them from clients.
   * Default false.
   */
  trustProxy?: boolean | undefined
  /**
   * Hand the handler a lazily built Request and install lightweight `Request` / `Response`
   * globals, so `new Response('…')` costs next to nothing (docs/adapters.md lists exactly
   * what changes). `false` leaves the globals alone and builds native undici objects, at
   * several times the cost per request. Default true.
   */
  lightweight?: boolean | undefined
  /**
   * Told about every error the client only sees as a 5xx problem or a cut connection: a
   * handler that throws (anything but a 4xx problem), a response that cannot be written, a
   * body stream that fails. `request` is undefined when the request itself could not be
   * converted.
   */
  onError?: ((error: unknown, request: Request | undefined) => void) | undefined
}

/** Per-request inputs of {@link handleNodeRequest}, for adapters over node-based frameworks. */
export interface NodeRequestOptions extends NodeAdapterOptions {
  /** The request target, when the framework rewrote `req.url` (Express `req.originalUrl`). */
  target?: string | undefined
  /** The scheme the framework resolved, honouring its own proxy settings. */
  protocol?: string | undefined
  /** The authority the framework resolved, honouring its own proxy settings. */
  host?: string | undefined
  /** The body, when the framework already read it from the IncomingMessage. */
  body?: Uint8Array | ReadableStream<Uint8Array> | undefined
}

/** A node:http `'request'` listener. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void

/**
 * A node:http request listener serving `handler`.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { toNodeListener } from '@api-blocks/node'
 *
 * createServer(toNodeListener(async () => Response.json({ ok: true }))).listen(3000)
 * ```
 */
export function toNodeListener(handler: Handler, options: NodeAdapterOptions = {}): NodeListener {
  // Install now, so responses built before the first request are lightweight too.
  if (options.lightweight !== false) installFastGlobals()
  return (req, res) => {
    void handleNodeRequest(handler, req, res, options)
  }
}

/**
 * Serves one request: converts it, runs `handler`, writes the Response. Never rejects: a
 * thrown error answers its problem (`errorToProblemResponse`), a failure mid-body destroys
 * the socket, and both are reported to `onError`.
 *
 * @example
 * ```ts
 * // Inside a framework route whose req/res are node:http objects:
 * await handleNodeRequest(handler, req, res, { target: req.originalUrl })
 * ```
 */
export async function handleNodeRequest(
  handler: Handler,
  req: IncomingMessage,
  res: ServerResponse,
  options: NodeRequestOptions = {},
): Promise<void> {
  let request: Request | undefined
  let response: Response
  try {
    request = createRequest(req, res, options)
    recordClient(request, req)
    response = await handler(request)
    if (!(response instanceof NativeResponse)) {
      throw new NodeAdapterError('NOT_A_RESPONSE', 'The handler did not resolve to a Response.')
    }
  } catch (error) {
    response = errorToProblemResponse(error, request === undefined ? {} : { request })
    // A problem the handler meant (a 404, a 422) is an answer, not a failure.
    if (response.status >= 500) report(options, error, request)
  }
  const head = req.method === 'HEAD'
  try {
    const streaming = writeResponse(res, response, head)
    if (streaming !== undefined) await streaming
  } catch (error) {
    report(options, error, request)
    if (res.headersSent) res.destroy()
    else {
      try {
        await writeResponse(res, errorToProblemResponse(error), head)
      } catch {
        res.destroy()
      }
    }
  }
}

function createRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: NodeRequestOptions,
): Request {
  const method = req.method ?? 'GET'
  // Fetch forbids these methods; node:http hands CONNECT to 'connect', the others come here.
  if (method === 'TRACE' || method === 'TRACK' || method === 'CONNECT') {
    throw new NodeAdapterError('UNSUPPORTED_METHOD', `The ${method} method is not supported.`)
  }
  const url = requestUrl(req, options)
  const body: BodySource = options.body
  if (options.lightweight !== false && installFastGlobals()) {
    return new IncomingRequest(req, res, method, url, body) as unknown as Request
  }
  return nativeIncomingRequest(req, res, method, url, body)
}

function report(options: NodeAdapterOptions, error: unknown, request: Request | undefined): void {
  try {
    options.onError?.(error, request)
  } catch {
    // A failing reporter must not turn one failed request into a crashed process.
  }
}
