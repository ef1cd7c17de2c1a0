/**
 * The steps every form of the adapter shares: the Request for an IncomingMessage (with the
 * client's address and the route parameters recorded), the problem for a thrown error, and
 * writing the answer without ever rejecting.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { setClientAddress, setRouteParams } from '@api-blocks/core'
import { errorToProblemResponse } from '@api-blocks/problem-details'
import { NodeAdapterError } from '../errors.ts'
import { lightweightGlobalsInstalled } from '../lightweight.ts'
import type { NodeAdapterOptions, NodeRequestOptions } from '../options.ts'
import type { BodySource } from './incoming-request.ts'
import { IncomingRequest, nativeIncomingRequest } from './incoming-request.ts'
import { isResponse } from './native.ts'
import { requestUrl } from './url.ts'
import type { ResponseSink } from './write.ts'
import { writeResponse } from './write.ts'

// Fetch's forbidden methods (Fetch §2.2.1 "forbidden method") that node:http parses (its
// parser refuses TRACK with a 400 of its own).
const FORBIDDEN = new Set(['CONNECT', 'TRACE'])

/**
 * The Request for `req`: the lazy one when `lightweight` is on and the lightweight globals
 * are in place, or when the method is one Fetch forbids (CONNECT, TRACE); a native one
 * otherwise. Records the client's address and the route parameters. Throws
 * `NodeAdapterError` (400) for a target or Host that cannot be a URL.
 */
export function createRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: NodeRequestOptions,
  body: BodySource,
): Request {
  const method = req.method ?? 'GET'
  // RFC 9112 §3.2.3: CONNECT's target is an authority (`example.com:443`), not a path.
  const url =
    method === 'CONNECT'
      ? requestUrl(req, { ...options, host: req.url ?? '', target: '/' })
      : requestUrl(req, options)
  // Fetch forbids CONNECT and TRACE (undici's constructor throws), yet they deserve the
  // answer any unsupported method gets (405 with Allow, the request id): only the lazy Request,
  // which takes any method, can carry them to the handler.
  const request =
    (options.lightweight === true && lightweightGlobalsInstalled()) || FORBIDDEN.has(method)
      ? (new IncomingRequest(req, res, method, url, body) as unknown as Request)
      : nativeIncomingRequest(req, res, method, url, body)
  const address = options.clientAddress ?? req.socket?.remoteAddress
  if (address !== undefined) setClientAddress(request, address)
  const params = routeParamsOf(options.routeParams)
  if (params !== undefined) setRouteParams(request, params)
  return request
}

/**
 * The body source for what a framework's body parser left (`NodeRequestOptions.body`): bytes
 * and streams as they are, a string as its UTF-8; anything else (a parsed object) is no
 * source, so the body streams from the IncomingMessage, which the parser consumed: reading it
 * fails with `REQUEST_BODY_CONSUMED`.
 */
export function bodySourceOf(parsed: unknown): BodySource {
  if (parsed instanceof Uint8Array || parsed instanceof ReadableStream) {
    return parsed as Uint8Array | ReadableStream<Uint8Array>
  }
  if (typeof parsed === 'string') return Buffer.from(parsed, 'utf8')
  return undefined
}

// A framework's route parameters as strings (see NodeRequestOptions.routeParams).
function routeParamsOf(
  params: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, string>> | undefined {
  if (typeof params !== 'object' || params === null) return undefined
  let recorded: Record<string, string> | undefined
  for (const [name, value] of Object.entries(params)) {
    const text =
      typeof value === 'string'
        ? value
        : Array.isArray(value) && value.every((part) => typeof part === 'string')
          ? value.join('/')
          : undefined
    if (text === undefined) continue
    recorded ??= {}
    recorded[name] = text
  }
  return recorded
}

/** `response` when it is a Response; otherwise throws `NOT_A_RESPONSE`. */
export function checkResponse(response: unknown): Response {
  if (isResponse(response)) return response
  throw new NodeAdapterError('NOT_A_RESPONSE', 'The handler did not resolve to a Response.')
}

/** The problem answering `error`; 5xx ones are reported to `onError`. */
export function problemFor(
  error: unknown,
  request: Request | undefined,
  options: NodeAdapterOptions,
): Response {
  const response = errorToProblemResponse(error, request === undefined ? {} : { request })
  // A problem the handler meant (a 404, a 422) is an answer, not a failure.
  if (response.status >= 500) report(options, error, request)
  return response
}

/**
 * Writes `response`. Never rejects: a failure before anything was sent answers its problem
 * instead, one after the header section destroys the socket; both go to `onError`.
 */
export async function send(
  res: ServerResponse,
  response: Response,
  head: boolean,
  options: NodeAdapterOptions,
  request: Request | undefined,
  sink: ResponseSink = res,
): Promise<void> {
  try {
    const streaming = writeResponse(res, response, head, sink)
    if (streaming !== undefined) await streaming
  } catch (error) {
    report(options, error, request)
    if (res.headersSent) res.destroy()
    else {
      try {
        await writeResponse(res, errorToProblemResponse(error), head, sink)
      } catch {
        res.destroy()
      }
    }
  }
}

/** Tells `onError`, which must not turn one failed request into a crashed process. */
function report(options: NodeAdapterOptions, error: unknown, request: Request | undefined): void {
  try {
    options.onError?.(error, request)
  } catch {
    // ignored: see above
  }
}
