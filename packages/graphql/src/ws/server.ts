/**
 * GraphQL over WebSocket on a Node HTTP server: the `graphql-transport-ws` protocol of
 * graphql-ws (its PROTOCOL.md) on the `ws` package, with the operation preparer the HTTP
 * endpoint uses (same guards, persisted documents, validation and codes) and the caller
 * authenticated once, from the `connection_init` payload.
 *
 * Bounds: one message is at most `maxPayloadBytes` (RFC 6455 §7.4.1 close 1009, "Message Too
 * Big", from `ws`), a connection runs at most `maxOperations` operations at a time, the server
 * holds at most `maxConnections` sockets (an upgrade beyond answers HTTP 503), and a socket
 * that sends no `connection_init` within `connectionInitWaitTimeout` is closed with 4408. A
 * socket's subscriptions hand on events, and its protocol pings get pongs, only while `ws` queues
 * at most `maxBufferedBytes` unsent (a client that stops reading). Every subscription of a socket
 * ends when it closes, including one the client completed while it was being admitted.
 * Compression (RFC 7692) is off: a compressed message could expand past any limit.
 *
 * @module
 */
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Principal } from '@api-blocks/core'
import type {
  ExecutionArgs,
  FormattedExecutionResult,
  GraphQLError,
  OperationDefinitionNode,
  OperationTypeNode,
} from 'graphql'
import type { Context, SubscribePayload } from 'graphql-ws'
import { handleProtocols, makeServer } from 'graphql-ws'
import { WebSocketServer } from 'ws'
import { codedError } from '../error.ts'
import { maskError } from '../http/format.ts'
import type { OperationPreparer, PreparedOperation } from '../http/operation.ts'
import { createOperationPreparer } from '../http/operation.ts'
import { chargeFor, rateLimitedError } from '../http/rate-limit.ts'
import { isAsyncIterable } from '../iterator.ts'
import type {
  GraphQLWebSocketOptions,
  GraphQLWebSocketServer,
  WebSocketConnection,
} from './options.ts'
import type { SocketExtra } from './socket.ts'
import { Operations, paced, Room, serveSocket } from './socket.ts'

const DEFAULT_MAX_PAYLOAD = 100 * 1024
const DEFAULT_MAX_BUFFERED = 1024 * 1024

/** An admitted operation: what graphql-ws executes, and what `onEvent` is told. */
interface Admitted {
  readonly args: ExecutionArgs
  readonly operation: OperationTypeNode
  readonly operationName: string | undefined
  readonly cost: number
  readonly maxCost: number
}

/** `ctx.extra` of graphql-ws's hooks: the socket, the upgrade request, the principal once known. */
interface ConnectionExtra extends SocketExtra {
  principal?: Principal | undefined
  /** Closes the socket when the principal's credentials expire. */
  expiry?: ReturnType<typeof setTimeout>
}

// setTimeout's longest delay (2^31 - 1 ms, about 24.8 days); a later expiry is cut to it.
const MAX_TIMEOUT = 2 ** 31 - 1

function wholeNumber(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`attachGraphQLWebSocket: ${name} must be a whole number of at least 0.`)
  }
  return value
}

function reject(socket: Duplex, status: string): void {
  socket.on('error', () => {})
  socket.once('finish', () => socket.destroy())
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
}

function pathOf(url: string | undefined): string {
  const value = url ?? ''
  const query = value.indexOf('?')
  return query === -1 ? value : value.slice(0, query)
}

/**
 * Serves GraphQL over WebSocket (`graphql-transport-ws`, the protocol of graphql-ws and
 * Apollo Client's `GraphQLWsLink`) on `server`, for upgrades to `options.path` only. Upgrades to
 * other paths are left to other `upgrade` listeners, or answered 404 when there are none.
 * Every `subscribe` message goes through the operation preparer (guards, persisted documents,
 * validation), and its coded errors come back as one `error` message.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { createTokenVerifier } from '@api-blocks/bearer'
 * import { attachGraphQLWebSocket, bearerAuthentication } from '@api-blocks/graphql/ws'
 *
 * const server = createServer(listener).listen(8080)
 * const ws = attachGraphQLWebSocket(server, {
 *   schema,
 *   path: '/graphql',
 *   persistedQueries: { store }, // the HTTP endpoint's store: one set of persisted documents
 *   authenticate: bearerAuthentication(createTokenVerifier({ jwt: { issuer, audience, jwksUrl } })),
 * })
 * process.once('SIGTERM', () => ws.close().then(() => server.close()))
 * ```
 */
export function attachGraphQLWebSocket(
  server: Server,
  options: GraphQLWebSocketOptions,
): GraphQLWebSocketServer {
  const path = options.path ?? '/graphql'
  const maxConnections = wholeNumber('maxConnections', options.maxConnections ?? 10_000)
  const maxOperations = wholeNumber('maxOperations', options.maxOperations ?? 100)
  const maxPayload = wholeNumber('maxPayloadBytes', options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD)
  const preparer = options.preparer ?? createOperationPreparer(options)
  const allowed = new Set<OperationTypeNode | string>(
    options.operations ?? ['query', 'mutation', 'subscription'],
  )
  const { authenticate, rateLimit, schema, onEvent } = options
  const clock = options.clock ?? Date.now
  const report = (error: unknown): void => options.onError?.(error)
  const keepAlive = wholeNumber('keepAlive', options.keepAlive ?? 12_000)
  const maxBuffered = wholeNumber(
    'maxBufferedBytes',
    options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED,
  )
  // The cost of each operation, for `extensions.cost` of its results (keyed by its arguments).
  const costs = new WeakMap<ExecutionArgs, { requested: number; limit: number }>()
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload,
    perMessageDeflate: false,
    // Agree to `graphql-transport-ws` only; without it graphql-ws closes the socket with 4406.
    handleProtocols: (protocols) => handleProtocols(protocols),
  })
  let pending = 0

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    if (pathOf(request.url) !== path) {
      // Another listener may serve this path; with none, Node would leave the socket open.
      if (server.listenerCount('upgrade') === 1) reject(socket, '404 Not Found')
      return
    }
    if (wss.clients.size + pending >= maxConnections) {
      onEvent?.({ type: 'refused', status: 503, request })
      reject(socket, '503 Service Unavailable')
      return
    }
    pending++
    let settled = false
    const settle = (): void => {
      if (!settled) pending--
      settled = true
    }
    socket.once('close', settle)
    wss.handleUpgrade(request, socket, head, (client) => {
      settle()
      wss.emit('connection', client, request)
    })
  }

  const connectionOf = (
    ctx: Context<Record<string, unknown> | undefined, ConnectionExtra>,
  ): WebSocketConnection => ({
    request: ctx.extra.request,
    connectionParams: ctx.connectionParams,
  })

  // The operation types served, checked by the preparer before the variables and the cost.
  const allow = (operation: OperationDefinitionNode): GraphQLError | undefined =>
    allowed.has(operation.operation)
      ? undefined
      : codedError(
          'METHOD_NOT_ALLOWED',
          `This WebSocket does not serve ${operation.operation} operations.`,
        )

  // Everything between a `subscribe` message and graphql-js: the operation cap, the context,
  // the preparer, the operation type, the rate limit.
  const admit = async (
    ctx: Context<Record<string, unknown> | undefined, ConnectionExtra>,
    payload: SubscribePayload,
  ): Promise<GraphQLError[] | Admitted> => {
    // The count includes this operation (started before this hook).
    const running = ctx.extra.operations.size
    if (running > maxOperations) {
      return [
        codedError(
          'BAD_REQUEST',
          `This connection already runs ${maxOperations} operations; complete one first.`,
          { limit: maxOperations, actual: running },
        ),
      ]
    }
    const { principal } = ctx.extra
    let contextValue: unknown
    let prepared: Awaited<ReturnType<OperationPreparer['prepare']>>
    try {
      contextValue =
        options.context === undefined
          ? { principal }
          : await options.context(principal, connectionOf(ctx))
      // The protocol requires `query` to be a string; a client sending only a persisted
      // document's hash or id (APQ, GraphQL-over-HTTP Appendix A `documentId`) sends ''.
      const request = payload.query === '' ? { ...payload, query: undefined } : payload
      prepared = await preparer.prepare(request, { context: contextValue, allow })
    } catch (error) {
      report(error)
      return [codedError('INTERNAL_SERVER_ERROR', 'Internal server error.')]
    }
    if (Array.isArray(prepared)) return [...(prepared as readonly GraphQLError[])]
    const { document, operation, variableValues, cost, maxCost } = prepared as PreparedOperation
    if (rateLimit !== undefined) {
      const refused = await charge(rateLimit, principal, ctx.extra.request, cost, report)
      if (refused !== undefined) return [refused]
    }
    // Admitted: only now may an APQ request's document be stored.
    await (prepared as PreparedOperation).register()
    const args: ExecutionArgs = {
      schema,
      document,
      variableValues: { ...variableValues },
      contextValue,
      rootValue: options.rootValue,
    }
    const operationName = operation.name?.value
    if (operationName !== undefined) args.operationName = operationName
    return { args, operation: operation.operation, operationName, cost, maxCost }
  }

  const protocol = makeServer<Record<string, unknown> | undefined, ConnectionExtra>({
    schema,
    connectionInitWaitTimeout: wholeNumber(
      'connectionInitWaitTimeout',
      options.connectionInitWaitTimeout ?? 3_000,
    ),
    async onConnect(ctx) {
      if (authenticate === undefined) return true
      let principal: Principal | undefined
      try {
        principal = await authenticate(ctx.connectionParams, ctx.extra.request)
      } catch (error) {
        report(error)
        // graphql-ws's 4500 Internal Server Error; the close that `false` asks for next finds
        // the socket closing already and does nothing.
        ctx.extra.socket.close(4500, 'Internal server error')
        return false
      }
      // The socket closed while `authenticate` ran (`onClose` has run): nothing to arm.
      const { socket } = ctx.extra
      if (socket.readyState !== socket.OPEN) return false
      // graphql-ws PROTOCOL.md, ConnectionInit: the server may close with 4403 Forbidden.
      if (principal === undefined) return false
      // Credentials that expire (RFC 7519 §4.1.4 `exp`, in seconds) end the connection when they
      // do, so a socket never outlives its token. 4403 is not fatal to graphql-ws's client: it
      // reconnects, with fresh `connectionParams` when they are a function.
      const exp = principal.claims['exp']
      if (typeof exp === 'number' && Number.isFinite(exp)) {
        const left = exp * 1000 - clock()
        if (left <= 0) return false
        ctx.extra.expiry = setTimeout(
          () => socket.close(4403, 'Forbidden: the credentials expired'),
          Math.min(left, MAX_TIMEOUT),
        )
        // An open socket keeps the process alive; its expiry need not.
        ctx.extra.expiry.unref()
      }
      ctx.extra.principal = principal
      return true
    },
    onClose(ctx, code) {
      clearTimeout(ctx.extra.expiry)
      // RFC 6455 §7.1.5: 1005, no status code received.
      onEvent?.({ type: 'closed', code: code ?? 1005, request: ctx.extra.request })
    },
    async onSubscribe(ctx, id, payload) {
      const { operations, socket } = ctx.extra
      // graphql-ws PROTOCOL.md, Subscribe: an id in use closes the socket with 4409. graphql-ws
      // checks the ids it knows; this one also knows an operation completed by the client while
      // it is being admitted or its subscription returns, so a reused id never runs twice.
      const operation = operations.start(id)
      if (operation === undefined) {
        // RFC 6455 §5.5: a close reason fits in 123 bytes (16 characters of UTF-8 take 64).
        socket.close(4409, `Subscriber for ${id.slice(0, 16)} already exists`)
        return [codedError('BAD_REQUEST', 'An operation with this id already runs.')]
      }
      let admitted: Awaited<ReturnType<typeof admit>>
      try {
        admitted = await admit(ctx, payload)
      } catch (error) {
        operations.finish(id, operation)
        throw error
      }
      // Completed by the client (or the socket closed) meanwhile: it does not run.
      if (operations.current(id) !== operation || !(id in ctx.subscriptions)) {
        operations.finish(id, operation)
        return [codedError('BAD_REQUEST', 'The operation was completed.')]
      }
      if (onEvent !== undefined) {
        const { request } = ctx.extra
        if (Array.isArray(admitted)) {
          const code = admitted[0]?.extensions['code']
          onEvent({ type: 'rejected', code: typeof code === 'string' ? code : 'UNKNOWN', request })
        } else {
          const { operation: kind, operationName, cost } = admitted
          onEvent({ type: 'operation', operation: kind, operationName, cost, request })
        }
      }
      if (Array.isArray(admitted)) {
        operations.finish(id, operation)
        return admitted
      }
      costs.set(admitted.args, { requested: admitted.cost, limit: admitted.maxCost })
      return admitted.args
    },
    onOperation(ctx, id, _payload, _args, result) {
      const { operations, room } = ctx.extra
      const operation = operations.current(id)
      if (!isAsyncIterable(result)) {
        if (operation !== undefined) operations.finish(id, operation)
        return undefined
      }
      // A subscription hands on its events only while the socket's queue has room, and ends
      // when the socket closes (graphql-ws ends only the subscriptions it still knows).
      const subscription = paced(result, room, () => {
        if (operation !== undefined) operations.finish(id, operation)
      })
      if (operation === undefined) void subscription.return()
      else operation.end = () => subscription.return()
      return subscription
    },
    onNext(_ctx, _id, _payload, args, result) {
      // As over HTTP: `extensions.cost` on every result (each event of a subscription).
      const formatted: FormattedExecutionResult = {}
      if (result.errors !== undefined) {
        formatted.errors = result.errors.map((error) => maskError(error, report).toJSON())
      }
      if (result.data !== undefined) formatted.data = result.data
      const cost = costs.get(args)
      if (result.extensions !== undefined || cost !== undefined) {
        formatted.extensions = { ...result.extensions, ...(cost ? { cost } : {}) }
      }
      return formatted
    },
    onError(_ctx, _id, _payload, errors) {
      return errors.map((error) => maskError(error, report).toJSON())
    },
  })
  wss.on('connection', (socket, request: IncomingMessage) => {
    const room = new Room(socket, maxBuffered)
    const operations = new Operations()
    serveSocket(protocol, socket, { socket, request, room, operations }, keepAlive, report)
  })
  server.on('upgrade', onUpgrade)

  let closing: Promise<void> | undefined
  return {
    connections: () => wss.clients.size,
    close() {
      server.off('upgrade', onUpgrade)
      closing ??= new Promise((resolve) => {
        // RFC 6455 §7.4.1: 1001, the endpoint is going away. `ws` calls back once every
        // socket has closed.
        for (const socket of wss.clients) socket.close(1001, 'Going away')
        wss.close(() => resolve())
      })
      return closing
    },
  }
}

async function charge(
  rateLimit: NonNullable<GraphQLWebSocketOptions['rateLimit']>,
  principal: Principal | undefined,
  request: IncomingMessage,
  cost: number,
  report: (error: unknown) => void,
): Promise<GraphQLError | undefined> {
  const units = chargeFor(cost)
  try {
    const result = await rateLimit.limiter.check(await rateLimit.key(principal, request), units)
    return result.allowed ? undefined : rateLimitedError(result, units)
  } catch (error) {
    // Fail open, as the HTTP endpoint and the rate-limit middleware do by default: an outage
    // of the limiter's store must not take the API down with it.
    report(error)
    return undefined
  }
}
