// What the audits do not exercise, through every adapter of the repository on a real server:
// the body limit on a streamed body, the 405 Allow field, RateLimit headers, masking, and a
// subscription over server-sent events.
import { createRateLimiter, MemoryRateLimitStore } from '@api-blocks/rate-limit'
import type { ExecutionResult } from 'graphql'
import { createClient } from 'graphql-sse'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createGraphQLHandler } from '../src/index.ts'
import type { Started } from './http-fixtures.ts'
import { adapters, makeRootValue, schema } from './http-fixtures.ts'

for (const [adapter, start] of Object.entries(adapters)) {
  describe(`the endpoint on ${adapter}`, () => {
    let server: Started
    const reported: unknown[] = []
    beforeAll(async () => {
      const limiter = createRateLimiter({
        store: new MemoryRateLimitStore(),
        policies: [{ name: 'cost', quota: 500, windowSeconds: 60 }],
      })
      server = await start(
        createGraphQLHandler({
          schema,
          rootValue: makeRootValue(),
          maxBodyBytes: 4096,
          rateLimit: { limiter, key: () => 'everyone' },
          onError: (error) => reported.push(error),
        }),
      )
    })
    afterAll(() => server.close())

    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      })

    test('a body over the limit: 413 BODY_TOO_LARGE (also without Content-Length)', async () => {
      const large = await post(
        JSON.stringify({ query: '{ hello }', variables: { pad: 'x'.repeat(10_000) } }),
      )
      expect(large.status).toBe(413)
      expect((await large.json()).errors[0].extensions.code).toBe('BODY_TOO_LARGE')
      const bytes = new TextEncoder().encode(
        JSON.stringify({ query: '{ hello }', variables: { pad: 'y'.repeat(10_000) } }),
      )
      const chunked = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new ReadableStream({
          start(controller) {
            for (let i = 0; i < bytes.length; i += 1000)
              controller.enqueue(bytes.slice(i, i + 1000))
            controller.close()
          },
        }),
        duplex: 'half',
      } as RequestInit)
      expect(chunked.status).toBe(413)
    })

    test('a mutation over GET: 405 with Allow: POST', async () => {
      const response = await fetch(
        `${server.url}?${new URLSearchParams({ query: 'mutation { step(label: "a") }' })}`,
      )
      expect(response.status).toBe(405)
      expect(response.headers.get('allow')).toBe('POST')
      expect((await response.json()).errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED')
    })

    test('the cost is charged: RateLimit headers and extensions.throttle', async () => {
      const response = await post(
        JSON.stringify({ query: '{ items(first: 5) { related(first: 1) { id } } }' }),
      )
      expect(response.status).toBe(200)
      expect(response.headers.get('ratelimit-limit')).toBe('500')
      const body = await response.json()
      expect(body.extensions.cost).toEqual({ requested: 6, limit: 1000 })
      expect(Number(response.headers.get('ratelimit-remaining'))).toBe(
        body.extensions.throttle.remaining,
      )
    })

    test('internal errors are masked and reported', async () => {
      const body = await (await post(JSON.stringify({ query: '{ boom }' }))).json()
      expect(body.errors[0]).toMatchObject({
        message: 'Internal server error.',
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      })
      expect(reported.length).toBeGreaterThan(0)
    })

    test('a subscription over server-sent events', async () => {
      const client = createClient({ url: server.url, retryAttempts: 0 })
      const results: ExecutionResult<Record<string, unknown>, unknown>[] = []
      for await (const result of client.iterate({ query: 'subscription { count(to: 2) }' }))
        results.push(result)
      expect(results.map((result) => result.data)).toEqual([{ count: 1 }, { count: 2 }])
    })
  })
}
