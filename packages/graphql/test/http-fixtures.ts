// The schema and servers the endpoint's tests share: a small schema with a list under
// @listSize, mutations that record their order, a subscription, and the endpoint mounted on
// every adapter of the repository on a real server at port 0.
import { once } from 'node:events'
import type { Server } from 'node:http'
import { toExpressHandler } from '@api-blocks/express'
import { fastifyFetchHandler } from '@api-blocks/fastify'
import { serve } from '@api-blocks/node'
import { serve as serveHono } from '@hono/node-server'
import express from 'express'
import Fastify from 'fastify'
import type { GraphQLSchema } from 'graphql'
import { buildSchema, GraphQLError } from 'graphql'
import { Hono } from 'hono'
import { costDirectivesSDL } from '../src/index.ts'

export const schema: GraphQLSchema = buildSchema(`
  ${costDirectivesSDL}
  type Item { id: ID! name: String related(first: Int): [Item!]! @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false) }
  type Query {
    hello(name: String): String
    items(first: Int): [Item!]! @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)
    boom: String
    refused: String
    whoami: String
  }
  type Mutation { step(label: String!): String }
  type Subscription { count(to: Int!): Int! }
`)

/** Mutations record when each starts and ends: proof that they run one after the other. */
export function makeRootValue(log: string[] = []): Record<string, unknown> {
  return {
    hello: ({ name }: { name?: string }) => `hello ${name ?? 'world'}`,
    items: ({ first }: { first?: number }) =>
      Array.from({ length: first ?? 3 }, (_, i) => ({
        id: String(i),
        name: `item ${i}`,
        related: [],
      })),
    boom: () => {
      throw new Error('database password is hunter2')
    },
    refused: () => {
      throw new GraphQLError('Not yours.', {
        extensions: { code: 'FORBIDDEN', scopes: ['read:secrets'] },
      })
    },
    whoami: (_: unknown, context: { principal?: { subject?: string } }) =>
      context.principal?.subject ?? null,
    step: async ({ label }: { label: string }) => {
      log.push(`start ${label}`)
      // Yield to the event loop several times: a concurrent mutation would start meanwhile.
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
      log.push(`end ${label}`)
      return label
    },
    count: async function* count({ to }: { to: number }) {
      for (let i = 1; i <= to; i++) yield { count: i }
    },
  }
}

export interface Started {
  readonly url: string
  close(): Promise<void>
}

async function listening(server: Server): Promise<Started> {
  if (!server.listening) await once(server, 'listening')
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** The endpoint on each adapter of the repository, each answering at `/graphql`. */
export const adapters: Record<
  string,
  (handler: (request: Request) => Promise<Response>) => Promise<Started>
> = {
  'node (serve)': async (handler) =>
    listening(
      serve(
        async (request) =>
          new URL(request.url).pathname === '/graphql'
            ? handler(request)
            : new Response(null, { status: 404 }),
        { port: 0, hostname: '127.0.0.1' },
      ),
    ),
  express: async (handler) => {
    const app = express()
    app.all('/graphql', toExpressHandler(handler))
    return listening(app.listen(0, '127.0.0.1'))
  },
  fastify: async (handler) => {
    const app = Fastify()
    await app.register(fastifyFetchHandler, { prefix: '/graphql', handler })
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    return { url: `${address}/graphql`, close: () => app.close() }
  },
  'hono (@hono/node-server)': async (handler) => {
    const app = new Hono()
    app.all('/graphql', (c) => handler(c.req.raw))
    return listening(serveHono({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
  },
}
