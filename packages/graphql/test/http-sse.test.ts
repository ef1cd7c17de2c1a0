// Subscriptions (and queries) over server-sent events with graphql-sse's own client, distinct
// connections mode, against the endpoint on a real server: the same preparer, guards,
// persisted documents and rate limit as POST.
import { createHash } from 'node:crypto'
import { createRateLimiter, MemoryRateLimitStore } from '@api-blocks/rate-limit'
import type { ExecutionResult } from 'graphql'
import { createClient } from 'graphql-sse'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createGraphQLHandler } from '../src/index.ts'
import { MemoryPersistedDocumentStore } from '../src/stores.ts'
import type { Started } from './http-fixtures.ts'
import { adapters, makeRootValue, schema } from './http-fixtures.ts'

async function collect(iterator: AsyncIterable<ExecutionResult>): Promise<ExecutionResult[]> {
  const results: ExecutionResult[] = []
  for await (const result of iterator) results.push(result)
  return results
}

const store = new MemoryPersistedDocumentStore()
const limiter = createRateLimiter({
  store: new MemoryRateLimitStore(),
  policies: [{ name: 'cost', quota: 1000, windowSeconds: 3600 }],
  clock: () => 1_700_000_000_000,
})

for (const adapter of ['node (serve)', 'fastify'] as const) {
  describe(`server-sent events (graphql-sse client) on ${adapter}`, () => {
    let server: Started
    beforeAll(async () => {
      server = await adapters[adapter]!(
        createGraphQLHandler({
          schema,
          rootValue: makeRootValue(),
          persistedQueries: { store },
          guards: { maxAliases: 2 },
          rateLimit: { limiter, key: () => adapter },
        }),
      )
    })
    afterAll(() => server.close())
    const client = () => createClient({ url: () => server.url, retryAttempts: 0 })

    test('a subscription streams every event, then completes', async () => {
      const results = await collect(client().iterate({ query: 'subscription { count(to: 3) }' }))
      expect(results.map((result) => result.data)).toEqual([
        { count: 1 },
        { count: 2 },
        { count: 3 },
      ])
      expect(results[0]?.extensions).toMatchObject({
        cost: { requested: 0, limit: 1000 },
        throttle: { limit: 1000 },
      })
    })

    test('a query over the event stream: one next event', async () => {
      const results = await collect(client().iterate({ query: '{ hello }' }))
      expect(results.map((result) => result.data)).toEqual([{ hello: 'hello world' }])
      expect(results[0]?.extensions).toMatchObject({ cost: { requested: 0, limit: 1000 } })
    })

    test('validation and guard refusals arrive as a next event with coded errors (graphql-sse PROTOCOL)', async () => {
      for (const [query, code] of [
        ['subscription { nope }', 'GRAPHQL_VALIDATION_FAILED'],
        ['subscription { a: count(to: 1) b: __typename c: __typename }', 'ALIAS_LIMIT_EXCEEDED'],
        ['subscription {', 'GRAPHQL_PARSE_FAILED'],
      ] as const) {
        const results = await collect(client().iterate({ query }))
        expect(results).toHaveLength(1)
        expect(results[0]?.errors?.[0]?.extensions?.['code']).toBe(code)
      }
    })

    test('a persisted document by APQ hash subscribes too', async () => {
      const query = 'subscription Two { count(to: 2) }'
      const sha256Hash = createHash('sha256').update(query).digest('hex')
      await store.set(`sha256:${sha256Hash}`, query)
      const results = await collect(
        client().iterate({ query: '', extensions: { persistedQuery: { version: 1, sha256Hash } } }),
      )
      expect(results.map((result) => result.data)).toEqual([{ count: 1 }, { count: 2 }])
    })

    test('RateLimit headers on the event stream response', async () => {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'subscription { count(to: 1) }' }),
      })
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      expect(response.headers.get('ratelimit-limit')).toBe('1000')
      const text = await response.text()
      expect(text).toContain('event: next')
      expect(text).toContain('event: complete')
    })

    test('request errors are answered with a status before any stream opens', async () => {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
        body: '[{}]',
      })
      expect(response.status).toBe(400)
      expect((await response.json()).errors[0].extensions.code).toBe('BAD_REQUEST')
    })

    test('a mutation over GET with Accept: text/event-stream: 405 with Allow: POST, no stream', async () => {
      const url = `${server.url}?${new URLSearchParams({ query: 'mutation { step(label: "x") }' })}`
      const response = await fetch(url, { headers: { accept: 'text/event-stream' } })
      expect(response.status).toBe(405)
      expect(response.headers.get('allow')).toBe('POST')
      expect((await response.json()).errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED')
    })

    test('a client that goes away ends the subscription (its source iterator is returned)', async () => {
      let ended!: () => void
      const finished = new Promise<void>((resolve) => {
        ended = resolve
      })
      const endless = await adapters[adapter]!(
        createGraphQLHandler({
          schema,
          rootValue: {
            count: async function* endlessCount() {
              try {
                for (let i = 1; ; i++) {
                  yield { count: i }
                  await new Promise((resolve) => setImmediate(resolve))
                }
              } finally {
                ended()
              }
            },
          },
        }),
      )
      const controller = new AbortController()
      const response = await fetch(endless.url, {
        method: 'POST',
        headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'subscription { count(to: 0) }' }),
        signal: controller.signal,
      })
      const reader = (response.body as ReadableStream<Uint8Array>).getReader()
      expect((await reader.read()).done).toBe(false)
      controller.abort()
      // Resolves only when the server returned the subscription's iterator (else the test times out).
      await finished
      await endless.close()
    })
  })
}

test('a subscription over the rate limit: 429 with Retry-After and RATE_LIMITED, no stream', async () => {
  const tight = createRateLimiter({
    store: new MemoryRateLimitStore(),
    policies: [{ name: 'cost', quota: 1, windowSeconds: 3600 }],
    clock: () => 1_700_000_000_000,
  })
  const server = await adapters['node (serve)']!(
    createGraphQLHandler({
      schema,
      rootValue: makeRootValue(),
      rateLimit: { limiter: tight, key: () => 'one' },
    }),
  )
  const subscribe = () =>
    fetch(server.url, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'subscription { count(to: 1) }' }),
    })
  const first = await subscribe()
  expect(first.status).toBe(200)
  await first.text()
  const second = await subscribe()
  expect(second.status).toBe(429)
  expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0)
  expect((await second.json()).errors[0].extensions.code).toBe('RATE_LIMITED')
  await server.close()
})

test('a client that stops reading stops the subscription being pulled (bounded, no unbounded queue)', async () => {
  let pulled = 0
  let returned = false
  const handler = createGraphQLHandler({
    schema,
    rootValue: {
      count: async function* fast() {
        try {
          for (;;) {
            pulled++
            yield { count: pulled }
            await new Promise((resolve) => setImmediate(resolve))
          }
        } finally {
          returned = true
        }
      },
    },
  })
  const response = await handler(
    new Request('http://localhost/graphql', {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'subscription { count(to: 0) }' }),
    }),
  )
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  await reader.read() // the stream's opening comment; then nobody reads
  // Many turns of the event loop: an unpaced source would be pulled once per turn.
  for (let turn = 0; turn < 200; turn++) await new Promise((resolve) => setImmediate(resolve))
  expect(pulled).toBeGreaterThan(0)
  expect(pulled).toBeLessThanOrEqual(20)
  // Reading drains it, and the source is pulled again.
  const before = pulled
  for (let i = 0; i < 40; i++) await reader.read()
  expect(pulled).toBeGreaterThan(before)
  await reader.cancel()
  expect(returned).toBe(true)
})
