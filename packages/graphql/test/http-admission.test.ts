// Admission order over HTTP and server-sent events: the method is checked before the cost, and
// an APQ request's document is stored only once its operation is admitted (method allowed,
// guards and cost passed, not rate limited), never for a refused one.
import { createHash } from 'node:crypto'
import { createRateLimiter, MemoryRateLimitStore } from '@api-blocks/rate-limit'
import { describe, expect, test } from 'vitest'
import type { GraphQLHandlerOptions } from '../src/index.ts'
import { createGraphQLHandler } from '../src/index.ts'
import { MemoryPersistedDocumentStore } from '../src/stores.ts'
import { makeRootValue, schema } from './http-fixtures.ts'

const URL_ = 'http://localhost/graphql'
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')
const persistedQuery = (query: string) => ({ version: 1, sha256Hash: sha256(query) })

function post(body: unknown, accept = 'application/json'): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify(body),
  })
}

function get(params: Record<string, unknown>, accept = 'application/json'): Request {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    search.set(name, typeof value === 'string' ? value : JSON.stringify(value))
  }
  return new Request(`${URL_}?${search}`, { headers: { accept } })
}

async function answer(response: Response) {
  const body = (await response.json()) as {
    data?: unknown
    errors?: { message: string; extensions: Record<string, unknown> }[]
  }
  return { status: response.status, headers: response.headers, body }
}

const code = (body: { errors?: { extensions: Record<string, unknown> }[] }) =>
  body.errors?.[0]?.extensions['code']

function setup(options: Partial<GraphQLHandlerOptions> = {}) {
  const log: string[] = []
  const store = new MemoryPersistedDocumentStore()
  const handler = createGraphQLHandler({
    schema,
    rootValue: makeRootValue(log),
    persistedQueries: { store },
    ...options,
  })
  return { log, store, handler }
}

describe('APQ registration waits for admission', () => {
  test('a mutation over GET with its hash: 405, not stored, and the hash alone does not run it', async () => {
    const { log, store, handler } = setup()
    const query = 'mutation { step(label: "via-get") }'
    const extensions = { persistedQuery: persistedQuery(query) }
    const refused = await answer(await handler(get({ query, extensions })))
    expect(refused.status).toBe(405)
    expect(refused.headers.get('allow')).toBe('POST')
    expect(code(refused.body)).toBe('METHOD_NOT_ALLOWED')
    expect(await store.get(`sha256:${sha256(query)}`)).toBeUndefined()
    const replay = await answer(await handler(post({ extensions })))
    expect(code(replay.body)).toBe('PERSISTED_QUERY_NOT_FOUND')
    expect(log).toEqual([])
  })

  test('a document refused for its cost is not stored', async () => {
    const { store, handler } = setup({ guards: { maxCost: 30 } })
    const query = '{ items(first: 40) { related(first: 1) { id } } }' // cost 41
    const extensions = { persistedQuery: persistedQuery(query) }
    const refused = await answer(await handler(post({ query, extensions })))
    expect(code(refused.body)).toBe('COST_LIMIT_EXCEEDED')
    expect(await store.get(`sha256:${sha256(query)}`)).toBeUndefined()
    expect(code((await answer(await handler(post({ extensions })))).body)).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    )
  })

  test('a document refused by the rate limit is not stored; admitted later, it is', async () => {
    const limiter = createRateLimiter({
      store: new MemoryRateLimitStore(),
      policies: [{ name: 'cost', quota: 10, windowSeconds: 60 }],
      clock: () => 1_700_000_000_000,
    })
    const { store, handler } = setup({ rateLimit: { limiter, key: () => 'apq' } })
    const query = '{ items(first: 20) { related(first: 1) { id } } }' // cost 21 > 10
    const cheap = '{ items(first: 5) { related(first: 1) { id } } }' // cost 6
    const extensions = { persistedQuery: persistedQuery(query) }
    const refused = await answer(await handler(post({ query, extensions })))
    expect(refused.status).toBe(429)
    expect(await store.get(`sha256:${sha256(query)}`)).toBeUndefined()
    const admitted = await answer(
      await handler(post({ query: cheap, extensions: { persistedQuery: persistedQuery(cheap) } })),
    )
    expect(admitted.body.data).toEqual({ items: expect.any(Array) })
    expect(await store.get(`sha256:${sha256(cheap)}`)).toBe(cheap)
  })

  test('a subscription sent without an event stream: refused, not stored', async () => {
    const { store, handler } = setup()
    const query = 'subscription { count(to: 2) }'
    const refused = await answer(
      await handler(post({ query, extensions: { persistedQuery: persistedQuery(query) } })),
    )
    expect(refused.status).toBe(400)
    expect(await store.get(`sha256:${sha256(query)}`)).toBeUndefined()
  })

  test('over server-sent events: a mutation over GET is 405 and not stored', async () => {
    const { log, store, handler } = setup()
    const query = 'mutation { step(label: "sse") }'
    const refused = await handler(
      get({ query, extensions: { persistedQuery: persistedQuery(query) } }, 'text/event-stream'),
    )
    expect(refused.status).toBe(405)
    await refused.body?.cancel()
    expect(await store.get(`sha256:${sha256(query)}`)).toBeUndefined()
    expect(log).toEqual([])
  })

  test('over server-sent events: a query admitted is stored', async () => {
    const { store, handler } = setup()
    const query = '{ hello }'
    const response = await handler(
      post({ query, extensions: { persistedQuery: persistedQuery(query) } }, 'text/event-stream'),
    )
    expect(await response.text()).toContain('hello world')
    expect(await store.get(`sha256:${sha256(query)}`)).toBe(query)
  })
})

describe('the method is checked before the cost', () => {
  for (const accept of ['application/json', 'application/graphql-response+json']) {
    test(`a mutation over GET that is over the cost limit: 405 (${accept})`, async () => {
      const { log, handler } = setup({ guards: { maxCost: 5, mutationCost: 10 } })
      const refused = await answer(
        await handler(get({ query: 'mutation { step(label: "x") }' }, accept)),
      )
      expect(refused.status).toBe(405)
      expect(refused.headers.get('allow')).toBe('POST')
      expect(code(refused.body)).toBe('METHOD_NOT_ALLOWED')
      expect(log).toEqual([])
    })
  }

  test('a mutation over GET whose variables do not coerce: 405', async () => {
    const { handler } = setup()
    const refused = await answer(
      await handler(get({ query: 'mutation ($l: String!) { step(label: $l) }' })),
    )
    expect(refused.status).toBe(405)
    expect(code(refused.body)).toBe('METHOD_NOT_ALLOWED')
  })
})

describe('variables nested without end', () => {
  test('12,000 levels: 400 BAD_REQUEST naming the limit, not a stack overflow', async () => {
    const reported: unknown[] = []
    const { handler } = setup({ onError: (error) => reported.push(error) })
    let value = '"x"'
    for (let level = 0; level < 12_000; level++) value = `{"y":[${value}]}`
    const body = `{"query":"query ($n: String) { hello(name: $n) }","variables":{"n":${value}}}`
    const response = await handler(
      new Request(URL_, { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
    )
    const { status, body: result } = await answer(response)
    expect(status).toBe(400)
    expect(result.errors).toEqual([
      {
        message: 'variables nest deeper than 64 levels.',
        extensions: { code: 'BAD_REQUEST', limit: 64 },
      },
    ])
    expect(reported).toEqual([])
  })
})

describe('refusals while reading the request are not charged', () => {
  test('400, 405, 413, 415 and 406 carry no RateLimit header fields and spend no quota', async () => {
    const limiter = createRateLimiter({
      store: new MemoryRateLimitStore(),
      policies: [{ name: 'cost', quota: 10, windowSeconds: 60 }],
      clock: () => 1_700_000_000_000,
    })
    const { handler } = setup({ rateLimit: { limiter, key: () => 'reading' }, maxBodyBytes: 64 })
    const refusals = [
      new Request(URL_, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{',
      }),
      new Request(URL_, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }),
      post({ query: `{ hello(name: "${'x'.repeat(100)}") }` }),
      new Request(URL_, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }),
      post({ query: '{ hello }' }, 'image/png'),
    ]
    const statuses: number[] = []
    for (const request of refusals) {
      const response = await handler(request)
      statuses.push(response.status)
      expect(response.headers.get('ratelimit-remaining')).toBeNull()
      await response.body?.cancel()
    }
    expect(statuses).toEqual([400, 405, 413, 415, 406])
    const admitted = await handler(post({ query: '{ hello }' }))
    expect(admitted.headers.get('ratelimit-remaining')).toBe('9')
  })
})

describe('what cost estimators receive as context', () => {
  test('over HTTP: the Fetch Request (the GraphQL context is built after the cost)', async () => {
    const contexts: unknown[] = []
    const built: unknown[] = []
    const { handler } = setup({
      guards: {
        estimators: [
          ({ context }) => {
            contexts.push(context)
            return undefined
          },
        ],
      },
      context: (request) => {
        built.push(request)
        return { request }
      },
    })
    const request = post({ query: '{ items(first: 2) { id } }' })
    expect((await answer(await handler(request))).body.data).toBeDefined()
    expect(contexts.length).toBeGreaterThan(0)
    for (const context of contexts) expect(context).toBe(request)
    expect(built).toEqual([request])
  })
})
