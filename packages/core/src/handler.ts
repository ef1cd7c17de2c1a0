/**
 * The two function shapes every api-blocks block is written against. Everything is plain Web
 * `Request` → `Response`; `compose()` of `@api-blocks/http` stacks middleware in front of a
 * handler, and every adapter serves a handler.
 *
 * @module
 */

/**
 * A Fetch handler: answers one request.
 *
 * @example
 * ```ts
 * const hello: Handler = async () => new Response('hello')
 * ```
 */
export type Handler = (request: Request) => Promise<Response>

/**
 * Middleware: sees the request first, decides whether and how to call `next`, and may change
 * the response that comes back. A middleware may hand `next` another `Request` (one that
 * carries a body it read, or a rewritten URL); the per-request context travels with it (see
 * `copyContext`).
 *
 * @example
 * ```ts
 * const poweredBy: Middleware = async (request, next) => {
 *   const response = await next(request)
 *   response.headers.set('x-powered-by', 'api-blocks')
 *   return response
 * }
 * ```
 */
export type Middleware = (request: Request, next: Handler) => Promise<Response>

/**
 * What `new Headers(init)` accepts. Public signatures use it instead of the DOM library's
 * `HeadersInit`, which a project compiled with `types: ["node"]` and no DOM library lacks.
 *
 * @example
 * ```ts
 * const fields: HeadersInitLike = { 'cache-control': 'no-store' }
 * ```
 */
export type HeadersInitLike = NonNullable<ConstructorParameters<typeof Headers>[0]>

/**
 * What `new Response(body)` accepts as a body, for the same reason as {@link HeadersInitLike}.
 *
 * @example
 * ```ts
 * const body: BodyInitLike = JSON.stringify({ ok: true })
 * ```
 */
export type BodyInitLike = NonNullable<ConstructorParameters<typeof Response>[0]>
