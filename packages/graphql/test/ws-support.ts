// Shared by the ws-*.test.ts files: a real HTTP server on port 0 with the WebSocket server
// attached, graphql-ws's own client over `ws`, and a raw `ws` socket for what the client
// never sends.
import { once } from 'node:events'
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Principal } from '@api-blocks/core'
import type { FormattedExecutionResult, GraphQLSchema } from 'graphql'
import { buildSchema } from 'graphql'
import type { Client, SubscribePayload } from 'graphql-ws'
import { createClient } from 'graphql-ws'
import WebSocket from 'ws'
import { authDirectivesSDL, authorizeSchema, MemoryPubSub } from '../src/index.ts'
import type { GraphQLWebSocketOptions, GraphQLWebSocketServer } from '../src/ws/index.ts'
import { attachGraphQLWebSocket } from '../src/ws/index.ts'

export const tokens: Record<string, Principal> = {
  'Bearer reader': { subject: 'reader', scopes: ['read:orders'], claims: {} },
  'Bearer admin': { subject: 'admin', scopes: ['read:orders', 'admin'], claims: {} },
}

/** A schema whose subscriptions read a MemoryPubSub, with one field that needs `admin`. */
export function makeSchema(
  pubsub: MemoryPubSub,
  hooks: { subscribed?: () => void; ended?: () => void } = {},
): GraphQLSchema {
  const schema = buildSchema(`${authDirectivesSDL}
      type Order { id: ID! total: Int @requiresScopes(scopes: ["admin"]) }
      type Query {
        hello: String
        whoami: String
        fail: String
        deep: Deep
      }
      type Deep { deep: Deep leaf: Int }
      type Mutation { bump: Int }
      type Subscription {
        orderChanged: Order! @requiresScopes(scopes: ["read:orders"])
        failing: Int
      }
    `)
  const subscription = schema.getSubscriptionType()!.getFields()
  subscription['orderChanged']!.subscribe = async () => {
    const source = await pubsub.subscribe('orders')
    hooks.subscribed?.()
    return {
      [Symbol.asyncIterator]() {
        return this
      },
      next: () => source.next(),
      async return() {
        hooks.ended?.()
        return source.return!()
      },
    }
  }
  subscription['orderChanged']!.resolve = (order) => order
  subscription['failing']!.subscribe = async function* () {
    yield { failing: 1 }
    throw new Error('the event source broke: secret detail')
  }
  const query = schema.getQueryType()!.getFields()
  query['hello']!.resolve = () => 'world'
  query['whoami']!.resolve = (_, __, context: { principal?: Principal }) =>
    context.principal?.subject ?? null
  query['fail']!.resolve = () => {
    throw new Error('database password is hunter2')
  }
  let count = 0
  schema.getMutationType()!.getFields()['bump']!.resolve = () => ++count
  // Last: authorizeSchema wraps the resolvers present when it runs.
  return authorizeSchema(schema)
}

export interface Harness {
  readonly server: Server
  readonly ws: GraphQLWebSocketServer
  readonly url: string
  readonly errors: unknown[]
  client(connectionParams?: Record<string, unknown>): Client
  close(): Promise<void>
}

export async function start(
  options: Partial<GraphQLWebSocketOptions> & Pick<GraphQLWebSocketOptions, 'schema'>,
  path = '/graphql',
): Promise<Harness> {
  const server = createServer((_, response) => {
    response.statusCode = 404
    response.end()
  })
  const errors: unknown[] = []
  const ws = attachGraphQLWebSocket(server, {
    path,
    authenticate: async (params) => tokens[String(params?.['authorization'])],
    onError: (error) => errors.push(error),
    ...options,
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  const url = `ws://127.0.0.1:${port}${path}`
  const clients: Client[] = []
  return {
    server,
    ws,
    url,
    errors,
    client(connectionParams = { authorization: 'Bearer reader' }) {
      const client = createClient({
        url,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        connectionParams,
      })
      clients.push(client)
      return client
    },
    async close() {
      await Promise.all(clients.map((client) => client.dispose()))
      await ws.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/**
 * `result` without its `extensions.cost`, which every result carries (as over HTTP): checked
 * here, so that the tests compare the rest. A result without it throws.
 */
export function withoutCost(result: FormattedExecutionResult): FormattedExecutionResult {
  const { cost, ...extensions } = (result.extensions ?? {}) as Record<string, unknown>
  const { requested, limit } = (cost ?? {}) as { requested?: unknown; limit?: unknown }
  if (typeof requested !== 'number' || typeof limit !== 'number') {
    throw new Error(`no extensions.cost in ${JSON.stringify(result)}`)
  }
  const { extensions: _, ...rest } = result
  return Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest
}

export interface Outcome {
  results: FormattedExecutionResult[]
  /** The `error` message's errors, or the CloseEvent that ended the socket. */
  error?: unknown
}

/** Subscribes and collects every `next` until `complete` or `error`. */
export function collect(
  client: Client,
  payload: SubscribePayload,
  onNext?: (n: number) => void,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const results: FormattedExecutionResult[] = []
    client.subscribe(payload, {
      next(result) {
        results.push(withoutCost(result as FormattedExecutionResult))
        onNext?.(results.length)
      },
      error(error) {
        resolve({ results, error })
      },
      complete() {
        resolve({ results })
      },
    })
  })
}

/** Subscribes, takes the first `n` results, then completes from the client side. */
export function take(
  client: Client,
  payload: SubscribePayload,
  n: number,
): Promise<FormattedExecutionResult[]> {
  return new Promise((resolve, reject) => {
    const results: FormattedExecutionResult[] = []
    const stop = client.subscribe(payload, {
      next(result) {
        results.push(withoutCost(result as FormattedExecutionResult))
        if (results.length === n) {
          stop()
          resolve(results)
        }
      },
      error: reject,
      complete: () => resolve(results),
    })
  })
}

/** The close code of a CloseEvent-like value (what the client reports when the socket ends). */
export function closeCode(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? (error as { code: number }).code
    : undefined
}

export interface RawSocket {
  readonly socket: WebSocket
  readonly messages: unknown[]
  send(message: unknown): void
  /** Resolves with the first message satisfying `match`. */
  message(match: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>
  closed: Promise<{ code: number; reason: string }>
}

/** A bare `ws` socket, for messages graphql-ws's client would never send. */
export async function raw(
  url: string,
  protocol: string | string[] = 'graphql-transport-ws',
): Promise<RawSocket> {
  const socket = new WebSocket(url, protocol)
  const messages: Record<string, unknown>[] = []
  const waiters: [
    (message: Record<string, unknown>) => boolean,
    (m: Record<string, unknown>) => void,
  ][] = []
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as Record<string, unknown>
    messages.push(message)
    for (const [index, [match, resolve]] of waiters.entries()) {
      if (match(message)) {
        waiters.splice(index, 1)
        resolve(message)
        break
      }
    }
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => resolve({ code, reason: String(reason) }))
  })
  socket.on('error', () => {})
  await once(socket, 'open')
  return {
    socket,
    messages,
    closed,
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    message: (match) =>
      new Promise((resolve) => {
        const found = messages.find(match)
        if (found !== undefined) resolve(found)
        else waiters.push([match, resolve])
      }),
  }
}

export { MemoryPubSub }
