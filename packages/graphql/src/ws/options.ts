/**
 * The options of the WebSocket server and what it hands back.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { Principal } from '@api-blocks/core'
import type { RateLimiter } from '@api-blocks/rate-limit'
import type { OperationPreparer, PreparerOptions } from '../http/operation.ts'

/**
 * What {@link GraphQLWebSocketOptions.context} receives besides the principal.
 *
 * @example
 * ```ts
 * const context = (principal: Principal | undefined, { request }: WebSocketConnection) => ({
 *   principal,
 *   ip: request.socket.remoteAddress,
 * })
 * ```
 */
export interface WebSocketConnection {
  /** The HTTP upgrade request that opened the socket. */
  readonly request: IncomingMessage
  /** The `connection_init` payload, if it was an object. */
  readonly connectionParams: Readonly<Record<string, unknown>> | undefined
}

/**
 * Options of `attachGraphQLWebSocket`: the {@link PreparerOptions} of the HTTP endpoint (the
 * guards, persisted documents, introspection switch), and the WebSocket specifics.
 *
 * @example
 * ```ts
 * const options: GraphQLWebSocketOptions = {
 *   schema,
 *   path: '/graphql',
 *   authenticate: async (params) => verify(String(params?.['authorization'] ?? '')),
 * }
 * ```
 */
export interface GraphQLWebSocketOptions extends PreparerOptions {
  /** The URL path upgrades are accepted on (default `/graphql`); the query string is ignored. */
  readonly path?: string
  /**
   * A preparer made by `createOperationPreparer`; default: one made from these options. Give
   * the HTTP endpoint and this server the same `persistedQueries.store`, so a document
   * registered on one (APQ) or loaded once (allow-list) is known to both.
   */
  readonly preparer?: OperationPreparer
  /**
   * Who the connection acts for, from the `connection_init` payload (a token such as
   * `{ authorization: "Bearer …" }`) and the upgrade request. `undefined` closes the socket with
   * 4403 Forbidden; a rejection closes it with 4500 and goes to `onError`. A principal whose
   * `claims.exp` (seconds, as in a JWT) has passed is refused the same way, and the socket of
   * one that expires later is closed with 4403 then. Without this option every connection is
   * accepted with no principal.
   */
  readonly authenticate?: (
    connectionParams: Readonly<Record<string, unknown>> | undefined,
    request: IncomingMessage,
  ) => Promise<Principal | undefined>
  /**
   * The GraphQL context value of each operation (default `{ principal }`, what
   * `authorizeSchema` reads). A rejection answers `INTERNAL_SERVER_ERROR` and goes to `onError`.
   */
  readonly context?: (principal: Principal | undefined, connection: WebSocketConnection) => unknown
  /** The root value operations execute against. */
  readonly rootValue?: unknown
  /**
   * The operation types served (default all three). A refused type answers an `error` message
   * with code `METHOD_NOT_ALLOWED`: serve mutations only over HTTP to keep them behind its
   * idempotency and rate-limit layers.
   */
  readonly operations?: readonly ('query' | 'mutation' | 'subscription')[]
  /**
   * Charges each operation's cost (`max(1, ceil(cost))`, as the HTTP endpoint does) to a rate
   * limit before it runs, keyed by `key` (for instance `principalKey(principal)` of
   * @api-blocks/core); a refusal answers an `error` message with code `RATE_LIMITED`, `cost`
   * and `retryAfterSeconds`. A failing limiter store lets the operation through and goes to
   * `onError`.
   */
  readonly rateLimit?: {
    readonly limiter: RateLimiter
    readonly key: (
      principal: Principal | undefined,
      request: IncomingMessage,
    ) => string | Promise<string>
  }
  /** Milliseconds to wait for `connection_init` before closing with 4408 (default 3,000). */
  readonly connectionInitWaitTimeout?: number
  /** Milliseconds between WebSocket pings; a socket that misses a pong is dropped (default 12,000; 0: none). */
  readonly keepAlive?: number
  /** Largest message accepted, in bytes (default 100 KiB); a larger one closes the socket with 1009. */
  readonly maxPayloadBytes?: number
  /**
   * Bytes a socket may queue unsent (`ws`'s `bufferedAmount`, default 1 MiB) before its
   * subscriptions stop handing on events: a client that stops reading then holds at most this
   * plus a message or two queued, and one event per subscription; further events wait in their
   * source (a pub/sub's bounded buffer drops the oldest). A client that reads nothing at all is
   * dropped by the keep-alive, its pongs never coming back.
   */
  readonly maxBufferedBytes?: number
  /** Operations running at once on one connection (default 100). */
  readonly maxOperations?: number
  /** Open sockets on this server (default 10,000); an upgrade beyond answers HTTP 503. */
  readonly maxConnections?: number
  /** Told about failures the client only sees masked or as a close code 4500. */
  readonly onError?: (error: unknown) => void
  /**
   * Told about each operation admitted (with its cost) or refused (by the code of its first
   * error), each upgrade refused at `maxConnections`, and each socket's end with its close code
   * (4403 refused or expired credentials, 4408 no `connection_init`, 1009 a message too big, …).
   * It must not throw.
   */
  readonly onEvent?: (event: GraphQLWebSocketEvent) => void
  /** Milliseconds since the epoch (default `Date.now`), for the expiry of credentials. */
  readonly clock?: () => number
}

/**
 * The server attached by `attachGraphQLWebSocket`.
 *
 * @example
 * ```ts
 * const ws = attachGraphQLWebSocket(server, { schema })
 * process.once('SIGTERM', () => ws.close().then(() => server.close()))
 * ```
 */
export interface GraphQLWebSocketServer {
  /** Open sockets. */
  connections(): number
  /**
   * Stops accepting upgrades, closes every socket with 1001 Going Away, and resolves once they
   * closed. Calling it again returns the same promise.
   */
  close(): Promise<void>
}

/**
 * What {@link GraphQLWebSocketOptions.onEvent} is told: the HTTP endpoint's events (`rejected`,
 * `operation`) with the upgrade request in place of the Request, and the life of sockets.
 *
 * @example
 * ```ts
 * const onEvent = (event: GraphQLWebSocketEvent) => {
 *   if (event.type === 'closed') metrics.increment(`graphql.ws.closed.${event.code}`)
 *   if (event.type === 'rejected') metrics.increment(`graphql.rejected.${event.code}`)
 * }
 * ```
 */
export type GraphQLWebSocketEvent =
  | { readonly type: 'rejected'; readonly code: string; readonly request: IncomingMessage }
  | {
      readonly type: 'operation'
      readonly operation: 'query' | 'mutation' | 'subscription'
      readonly operationName: string | undefined
      readonly cost: number
      readonly request: IncomingMessage
    }
  | { readonly type: 'refused'; readonly status: 503; readonly request: IncomingMessage }
  | { readonly type: 'closed'; readonly code: number; readonly request: IncomingMessage }
