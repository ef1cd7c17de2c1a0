/**
 * The authorisation server: {@link createAuthorizationServer} wires the endpoints, the
 * interaction hand-off and in-process introspection over one store and one set of keys.
 *
 * @module
 */
import type { Handler } from '@api-blocks/core'
import { handleAuthorize } from './authorize.ts'
import { createContext, type ServerContext } from './context.ts'
import { type AuthorizationServerMetadata, buildMetadata, publicJson } from './discovery.ts'
import {
  completeInteraction,
  denyInteraction,
  type InteractionDetails,
  type InteractionResult,
  interactionDetails,
} from './interaction.ts'
import { handleIntrospect, type IntrospectionResult, introspectToken } from './introspect.ts'
import { MemoryOAuthStore } from './memory-store.ts'
import { type AuthorizationServerOptions, resolveOptions } from './options.ts'
import { handleRevoke } from './revoke.ts'
import { handleToken, methodNotAllowed } from './token-endpoint.ts'
import { handleUserInfo } from './userinfo.ts'

/**
 * An authorisation server: Fetch handlers for its endpoints, and the calls the host's login
 * and consent pages and resource servers make in process.
 *
 * @example
 * ```ts
 * const server: AuthorizationServer = createAuthorizationServer(options)
 * const response = (await server.handle(request)) ?? new Response('Not Found', { status: 404 })
 * ```
 */
export interface AuthorizationServer {
  readonly issuer: string
  /** The discovery document (RFC 8414 / OpenID Connect Discovery). */
  readonly metadata: AuthorizationServerMetadata
  /**
   * Answers a request to one of the endpoints (GET authorize, POST token, POST introspect,
   * POST revoke, GET both well-knowns, GET jwks, GET userinfo), or `undefined` when the path is none of them,
   * so the host answers it.
   */
  handle(request: Request): Promise<Response | undefined>
  /** `GET /authorize` (RFC 6749 §4.1.1). */
  readonly authorize: Handler
  /** `POST /token` (RFC 6749 §3.2). */
  readonly token: Handler
  /** `POST /oauth/introspect` (RFC 7662). */
  readonly introspect: Handler
  /** `POST /oauth/revoke` (RFC 7009). */
  readonly revoke: Handler
  /** `GET /.well-known/openid-configuration` and `/.well-known/oauth-authorization-server`. */
  readonly discovery: Handler
  /** `GET /.well-known/jwks.json`: the public signing keys. */
  readonly jwks: Handler
  /** `GET` or `POST /userinfo` (OpenID Connect Core §5.3). */
  readonly userinfo: Handler
  /**
   * What the host's login and consent page shows; `undefined` when unknown, expired, or when
   * `request` (the host page's request) lacks the interaction's binding cookie, which
   * `/authorize` set on the browser that started it.
   */
  interaction(id: string, request: Request): Promise<InteractionDetails | undefined>
  /**
   * The host authenticated `subject`, who approved `scopes` (a subset of those asked; only
   * these are bound; none is a refusal). Answers the 303 to the client's redirect URI with
   * `code`, `state` and `iss` (RFC 9207), once, clearing the binding cookie; an unknown or
   * expired id, or a `request` without the binding cookie, gets a 400 HTML page; a store
   * failure a 500 page. `max_age` exceeded: a 303 with `login_required`.
   */
  completeInteraction(id: string, result: InteractionResult, request: Request): Promise<Response>
  /**
   * The user refused: a 303 to the redirect URI with `error=access_denied`, `state` and `iss`
   * (only for the browser that started the interaction, like `completeInteraction`).
   */
  denyInteraction(id: string, request: Request): Promise<Response>
  /**
   * In-process introspection (what the introspection endpoint answers, without client
   * authentication), for a resource server in the same process: revocation shows at once.
   */
  introspectToken(token: string): Promise<IntrospectionResult>
}

function pathOf(issuer: string): string {
  const path = new URL(issuer).pathname
  return path === '/' ? '' : path.replace(/\/$/, '')
}

/**
 * CORS for the endpoints a browser client calls (a single-page app at another origin calls the
 * token, revocation and UserInfo endpoints). `*` is safe: these endpoints take no cookies, only what the
 * request carries.
 */
function withCors(handler: Handler): Handler {
  return async (request) => {
    if (request.method === 'OPTIONS') {
      return new Response(null, {
        status: 204,
        headers: {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, POST',
          'access-control-allow-headers': 'authorization, content-type',
          'access-control-max-age': '600',
        },
      })
    }
    const response = await handler(request)
    response.headers.set('access-control-allow-origin', '*')
    return response
  }
}

function guarded(
  handler: (context: ServerContext, request: Request) => Promise<Response>,
  context: ServerContext,
): Handler {
  return (request) => handler(context, request)
}

/**
 * Creates an authorisation server. Checks every option at once (a TypeError or RangeError
 * names the bad one); the signing keys are imported on first use.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, hashClientSecret } from '@api-blocks/oauth'
 *
 * const server = createAuthorizationServer({
 *   issuer: 'http://127.0.0.1:3000',
 *   clients: [
 *     { id: 'backend', secretHashes: [await hashClientSecret('backend-secret')],
 *       grantTypes: ['client_credentials'], scopes: ['read:orders'] },
 *   ],
 *   interactionUrl: (id) => `/login?interaction=${id}`,
 * })
 * const answer = await server.handle(new Request('http://127.0.0.1:3000/.well-known/openid-configuration'))
 * ```
 */
export function createAuthorizationServer(
  options: AuthorizationServerOptions,
): AuthorizationServer {
  const resolved = resolveOptions(options)
  const context = createContext(resolved, options.store ?? new MemoryOAuthStore())
  const metadata = buildMetadata(resolved)
  const discovery: Handler = async (request) =>
    request.method === 'GET' || request.method === 'HEAD'
      ? publicJson(metadata, 300)
      : methodNotAllowed('GET, HEAD')
  const jwks: Handler = async (request) =>
    request.method === 'GET' || request.method === 'HEAD'
      ? publicJson((await context.keys()).jwks, 300)
      : methodNotAllowed('GET, HEAD')
  const authorize = guarded(handleAuthorize, context)
  const token = withCors(guarded(handleToken, context))
  const introspect = guarded(handleIntrospect, context)
  const revoke = withCors(guarded(handleRevoke, context))
  const userinfo = withCors(guarded(handleUserInfo, context))
  // The endpoints live under the issuer's path (an issuer https://example.com/auth has its
  // token endpoint at /auth/token); discovery too (RFC 8414 §3.1 would insert the well-known
  // segment first, OpenID Connect Discovery §4 appends it: the issuer path prefix serves both
  // the common way, appended).
  const base = pathOf(resolved.issuer)
  const routes = new Map<string, Handler>([
    [base + resolved.paths.authorize, authorize],
    [base + resolved.paths.token, token],
    [base + resolved.paths.introspect, introspect],
    [base + resolved.paths.revoke, revoke],
    [base + resolved.paths.jwks, jwks],
    [base + resolved.paths.userinfo, userinfo],
    [`${base}/.well-known/openid-configuration`, discovery],
    [`${base}/.well-known/oauth-authorization-server`, discovery],
  ])
  // RFC 8414 §3.1: for an issuer with a path, the well-known segment goes before it.
  if (base !== '') routes.set(`/.well-known/oauth-authorization-server${base}`, discovery)
  return {
    issuer: resolved.issuer,
    metadata,
    async handle(request) {
      const handler = routes.get(new URL(request.url).pathname)
      return handler === undefined ? undefined : handler(request)
    },
    authorize,
    token,
    introspect,
    revoke,
    discovery,
    jwks,
    userinfo,
    interaction: (id, request) => interactionDetails(context, id, request),
    completeInteraction: (id, result, request) => completeInteraction(context, id, result, request),
    denyInteraction: (id, request) => denyInteraction(context, id, request),
    introspectToken: (token) => introspectToken(context, token),
  }
}
