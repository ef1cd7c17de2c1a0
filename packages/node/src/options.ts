/**
 * The options every node-based adapter takes, and the per-request inputs a framework adapter
 * passes to `handleNodeRequest` / `handleNodeMiddleware`.
 *
 * @module
 */

/**
 * Options of `toNodeListener`, `serve`, and every adapter built on them.
 *
 * @example
 * ```ts
 * const options: NodeAdapterOptions = { lightweight: true, onError: (error) => console.error(error) }
 * ```
 */
export interface NodeAdapterOptions {
  /**
   * Take the scheme and host from X-Forwarded-Proto and X-Forwarded-Host (their first
   * value). Only turn this on behind a proxy that sets both and strips them from clients.
   * Default false.
   */
  trustProxy?: boolean | undefined
  /**
   * The opt-in fast path. Default false: the handler gets a native undici Request and the
   * globals are left alone. `true` replaces `globalThis.Request` and `globalThis.Response` with
   * the lightweight classes of this package when the adapter is created
   * (`installLightweightGlobals()`: only while they are the platform's own), and then hands
   * the handler a lazily built Request, so a request and `new Response('…')` cost next to
   * nothing. Its limits: `fetch(request)` needs `fetch(new Request(request))`, and
   * `Request.prototype` methods called explicitly on it throw (docs/adapters.md lists the
   * exact rules). While another library's classes are the globals, requests are native.
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

/**
 * Per-request inputs of `handleNodeRequest` and `handleNodeMiddleware`, for adapters over
 * node-based frameworks: what the framework resolved that node:http alone does not know.
 *
 * @example
 * ```ts
 * const options: NodeRequestOptions = { target: '/v1/orders/7', clientAddress: '203.0.113.7', routeParams: { id: '7' } }
 * ```
 */
export interface NodeRequestOptions extends NodeAdapterOptions {
  /** The request target, when the framework rewrote `req.url` (Express `req.originalUrl`). */
  target?: string | undefined
  /** The scheme the framework resolved, honouring its own proxy settings. */
  protocol?: string | undefined
  /** The authority the framework resolved, honouring its own proxy settings. */
  host?: string | undefined
  /**
   * What the framework's body parser left on the request (Express `req.body`, Fastify
   * `request.body`): bytes, a stream or a string (sent as UTF-8) are the body. Anything else
   * (a parsed object) cannot become bytes again: the body reads as consumed, and reading it
   * fails with `REQUEST_BODY_CONSUMED` (500). Absent: the body streams from the socket.
   */
  body?: unknown
  /**
   * The client's address as the framework resolved it under its own trust-proxy setting
   * (Express `req.ip`, Fastify `request.ip`); default the socket's remote address. Recorded
   * for `clientAddressOf`.
   */
  clientAddress?: string | undefined
  /**
   * The parameters of the framework route that matched (Express `req.params`, Fastify
   * `request.params`), recorded for `routeParamsOf`: string values as they are, an array of
   * strings (an Express 5 wildcard's segments) joined with `/`, anything else left out.
   */
  routeParams?: Readonly<Record<string, unknown>> | undefined
}
