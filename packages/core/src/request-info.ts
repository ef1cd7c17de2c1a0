/**
 * What a Fetch `Request` cannot say about itself but the server that received it knows: the
 * network peer's address and the parameters of the route that matched. Adapters and routers
 * record them; rate limits, logs and handlers read them here, whatever server they run in.
 *
 * @module
 */
import type { ContextKey } from './context.ts'
import { getContext, setContext, sharedContextKey } from './context.ts'

const CLIENT_ADDRESS: ContextKey<string> = sharedContextKey('core.client-address')
const ROUTE_PARAMS: ContextKey<Readonly<Record<string, string>>> =
  sharedContextKey('core.route-params')

/**
 * The client's IP address as the server sees it, or `undefined` when no adapter recorded one.
 * The node, Express and Fastify adapters record the socket's remote address, or the address
 * the framework resolved under its own trust-proxy setting (Express `req.ip`, Fastify
 * `request.ip`). Behind a proxy without such a setting it is the proxy's address.
 *
 * @example
 * ```ts
 * const address = clientAddressOf(request) ?? 'unknown'
 * ```
 */
export function clientAddressOf(request: Request): string | undefined {
  return getContext(request, CLIENT_ADDRESS)
}

/**
 * Records the client's IP address for `request`: what an adapter (or a Fetch runtime's entry
 * point, from Bun's `server.requestIP()` or Deno's `info.remoteAddr`) calls before the handler.
 *
 * @example
 * ```ts
 * Bun.serve({ fetch: (request, server) => {
 *   setClientAddress(request, server.requestIP(request)?.address ?? '')
 *   return handler(request)
 * } })
 * ```
 */
export function setClientAddress(request: Request, address: string): void {
  setContext(request, CLIENT_ADDRESS, address)
}

/**
 * The parameters of the route that matched `request` (`{ id: '42' }` for `/orders/:id`), as the
 * router or framework recorded them; `undefined` when none did.
 *
 * @example
 * ```ts
 * const id = routeParamsOf(request)?.['id']
 * ```
 */
export function routeParamsOf(request: Request): Readonly<Record<string, string>> | undefined {
  return getContext(request, ROUTE_PARAMS)
}

/**
 * Records the parameters of the route that matched `request`: what a router, or an adapter
 * mounted on a framework route (Express `req.params`), calls before the handler.
 *
 * @example
 * ```ts
 * setRouteParams(request, { id: '42' })
 * ```
 */
export function setRouteParams(request: Request, params: Readonly<Record<string, string>>): void {
  setContext(request, ROUTE_PARAMS, params)
}
