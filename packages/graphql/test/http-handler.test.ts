// The HTTP endpoint through its Fetch handler (the adapters are covered by audit.test.ts and
// http-adapters.test.ts): methods, media types and statuses (GraphQL-over-HTTP §6 and §7),
// every rejection code, masking, mutations in series, the context, the rate limit by cost.
import { setBodyLimit, setPrincipal } from '@api-blocks/core'
import { createRateLimiter, MemoryRateLimitStore } from '@api-blocks/rate-limit'
import { describe, expect, test } from 'vitest'
import type { GraphQLHandlerEvent, GraphQLHandlerOptions } from '../src/index.ts'
import { createGraphQLHandler } from '../src/index.ts'
import { makeRootValue, schema } from './http-fixtures.ts'

const URL_ = 'http://localhost/graphql'
const JSON_TYPE = 'application/json; charset=utf-8'
const GRAPHQL_RESPONSE = 'application/graphql-response+json'

function post(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

function get(params: Record<string, string>, headers: Record<string, string> = {}): Request {
  return new Request(`${URL_}?${new URLSearchParams(params)}`, { headers })
}

interface Body {
  data?: Record<string, unknown> | null
  errors?: { message: string; path?: unknown[]; extensions: Record<string, unknown> }[]
  extensions?: Record<string, unknown>
}

async function answer(
  response: Response,
): Promise<{ status: number; body: Body; headers: Headers }> {
  return {
    status: response.status,
    body: (await response.json()) as Body,
    headers: response.headers,
  }
}

function make(options: Partial<GraphQLHandlerOptions> = {}) {
  return createGraphQLHandler({ schema, rootValue: makeRootValue(), ...options })
}

describe('GraphQL over HTTP', () => {
  const handler = make()

  test('GET and POST run queries: 200 application/json with extensions.cost', async () => {
    for (const request of [
      get({ query: '{ hello }' }),
      post({ query: 'query ($n: String) { hello(name: $n) }', variables: { n: 'world' } }),
    ]) {
      const { status, body, headers } = await answer(await handler(request))
      expect(status).toBe(200)
      expect(headers.get('content-type')).toBe(JSON_TYPE)
      expect(body).toEqual({
        data: { hello: 'hello world' },
        extensions: { cost: { requested: 0, limit: 1000 } },
      })
    }
  })

  test('extensions.cost reports the cost under the variables', async () => {
    const { body } = await answer(
      await handler(
        post({
          query: 'query ($n: Int) { items(first: $n) { related(first: 3) { id } } }',
          variables: { n: 4 },
        }),
      ),
    )
    // items 1 + 4 × (related 1 + 3 × 0) = 5
    expect(body.extensions).toEqual({ cost: { requested: 5, limit: 1000 } })
  })

  test('MUST NOT execute a mutation over GET: 405 with Allow: POST and METHOD_NOT_ALLOWED', async () => {
    const response = await handler(get({ query: 'mutation { step(label: "x") }' }))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
    expect((await response.json()).errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED')
  })

  test('methods other than GET and POST: 405 with Allow: GET, POST', async () => {
    const response = await handler(new Request(URL_, { method: 'PUT', body: '{}' }))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, POST')
    expect((await response.json()).errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED')
  })

  test('request errors are 400 BAD_REQUEST whatever the Accept', async () => {
    const bad = [
      post('{"query": '),
      post('[{"query": "{ hello }"}]'),
      post('"just a string"'),
      post({ query: '{ hello }', variables: [] }),
      post({ query: 1 }),
      post({ query: '{ hello }', operationName: {} }),
      post({ query: '{ hello }', extensions: 'x' }),
      post({}),
      get({ query: '{ hello }', variables: '{not json' }),
      new Request(URL_, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Uint8Array([0xff, 0xfe]),
      }),
    ]
    for (const request of bad) {
      const { status, body } = await answer(await handler(request))
      expect(status).toBe(400)
      expect(body.errors).toHaveLength(1)
      expect(body.errors?.[0]?.extensions['code']).toBe('BAD_REQUEST')
    }
  })

  test('a body that is not application/json: 415', async () => {
    const response = await handler(
      new Request(URL_, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }),
    )
    expect(response.status).toBe(415)
    expect((await response.json()).errors[0].extensions.code).toBe('BAD_REQUEST')
  })

  test('an Accept the server cannot answer: 406 with a coded error', async () => {
    const response = await handler(get({ query: '{ hello }' }, { accept: 'text/html' }))
    expect(response.status).toBe(406)
    expect((await response.json()).errors[0].extensions.code).toBe('BAD_REQUEST')
  })

  test('a body over maxBodyBytes: 413 BODY_TOO_LARGE; a query string over it: 414', async () => {
    const small = make({ maxBodyBytes: 1024 })
    const large = await answer(
      await small(post({ query: '{ hello }', variables: { pad: 'x'.repeat(2000) } })),
    )
    expect(large.status).toBe(413)
    expect(large.body.errors?.[0]?.extensions['code']).toBe('BODY_TOO_LARGE')
    expect(large.body.errors?.[0]?.extensions['limit']).toBe(1024)
    const long = await answer(await small(get({ query: `{ hello ${' '.repeat(2000)}}` })))
    expect(long.status).toBe(414)
    expect(long.body.errors?.[0]?.extensions['code']).toBe('BODY_TOO_LARGE')
    expect(long.body.errors?.[0]?.extensions['limit']).toBe(1024)
    // The default is 100 KiB: a huge variable list is refused before it is parsed.
    const huge = await answer(
      await handler(
        post({
          query: '{ hello }',
          variables: { ids: Array.from({ length: 60_000 }, (_, i) => i) },
        }),
      ),
    )
    expect(huge.status).toBe(413)
  })

  test('a maxBodyBytes that is not a byte count is refused when the handler is made', () => {
    for (const maxBodyBytes of [-1, 1.5, Number.NaN])
      expect(() => make({ maxBodyBytes })).toThrow(RangeError)
  })

  test("core's per-request body limit wins over maxBodyBytes", async () => {
    const request = post({ query: '{ hello }', variables: { pad: 'x'.repeat(200) } })
    setBodyLimit(request, 100)
    expect((await handler(request)).status).toBe(413)
  })

  test('document errors: 200 under application/json, 400 under application/graphql-response+json', async () => {
    for (const [query, code] of [
      ['{ hello', 'GRAPHQL_PARSE_FAILED'],
      ['{ nope }', 'GRAPHQL_VALIDATION_FAILED'],
    ] as const) {
      const json = await answer(await handler(post({ query })))
      expect(json.status).toBe(200)
      expect(json.body.errors?.[0]?.extensions['code']).toBe(code)
      expect(json.body).not.toHaveProperty('data')
      const modern = await answer(await handler(post({ query }, { accept: GRAPHQL_RESPONSE })))
      expect(modern.status).toBe(400)
      expect(modern.headers.get('content-type')).toBe(`${GRAPHQL_RESPONSE}; charset=utf-8`)
      expect(modern.body.errors?.[0]?.extensions['code']).toBe(code)
    }
  })

  test('every rejection is one coded error with its numbers', async () => {
    const strict = make({
      guards: {
        maxDepth: 3,
        maxAliases: 2,
        maxDirectives: 2,
        maxNodes: 20,
        maxTokens: 200,
        maxCost: 30,
        maxPageSize: 50,
      },
      introspection: false,
    })
    const cases: [string, Record<string, unknown>, string, Record<string, unknown>?][] = [
      [
        '{ items { related { related { related { id } } } } }',
        {},
        'DEPTH_LIMIT_EXCEEDED',
        { limit: 3, actual: 5 },
      ],
      ['{ a: hello b: hello c: hello }', {}, 'ALIAS_LIMIT_EXCEEDED', { limit: 2, actual: 3 }],
      [
        '{ hello @skip(if: false) @include(if: true) boom @skip(if: false) }',
        {},
        'DIRECTIVE_LIMIT_EXCEEDED',
        { limit: 2, actual: 3 },
      ],
      [
        `{ ${'items(first: 1) { id name } '.repeat(1)}${'hello '.repeat(21)}}`,
        {},
        'NODE_LIMIT_EXCEEDED',
        { limit: 20 },
      ],
      [`{ ${'hello '.repeat(300)}}`, {}, 'TOKEN_LIMIT_EXCEEDED', { limit: 200 }],
      [
        'query ($n: Int) { items(first: $n) { related(first: $n) { id } } }',
        { n: 40 },
        'COST_LIMIT_EXCEEDED',
        { limit: 30, actual: 41 },
      ],
      ['{ items(first: 51) { id } }', {}, 'PAGE_SIZE_EXCEEDED', { limit: 50, actual: 51 }],
      ['{ __schema { types { name } } }', {}, 'INTROSPECTION_DISABLED'],
      ['query A { hello } query B { hello }', {}, 'OPERATION_NOT_FOUND'],
      ['query ($n: Int!) { items(first: $n) { id } }', { n: 'many' }, 'BAD_USER_INPUT'],
    ]
    for (const [query, variables, code, numbers] of cases) {
      const { status, body } = await answer(await strict(post({ query, variables })))
      expect(status, code).toBe(200)
      expect(
        body.errors?.map((error) => error.extensions['code']),
        query,
      ).toContain(code)
      expect(body.errors?.every((error) => error.extensions['code'] === code)).toBe(true)
      if (numbers) expect(body.errors?.[0]?.extensions).toMatchObject(numbers)
    }
  })

  test('hostile documents are refused with a code, none crashing or stalling', async () => {
    const doubling = [
      'query Q { ...F0 }',
      ...Array.from(
        { length: 30 },
        (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`,
      ),
      'fragment F30 on Query { hello }',
    ].join('\n')
    const hostile: [string, string][] = [
      [doubling, 'NODE_LIMIT_EXCEEDED'],
      [
        'query Q { ...A } fragment A on Query { ...B } fragment B on Query { ...A }',
        'GRAPHQL_VALIDATION_FAILED',
      ],
      [
        `{ ${Array.from({ length: 3000 }, (_, i) => `a${i}: hello`).join(' ')} }`,
        'ALIAS_LIMIT_EXCEEDED',
      ],
      [
        `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: hello`).join(' ')} }`,
        'TOKEN_LIMIT_EXCEEDED',
      ],
      [`{ ${'items { '.repeat(1000)}id${' }'.repeat(1000)} }`, 'DEPTH_LIMIT_EXCEEDED'],
      [
        `{ __schema { types { ${'ofType { '.repeat(1000)}name${' }'.repeat(1000)} } } }`,
        'DEPTH_LIMIT_EXCEEDED',
      ],
    ]
    // A body limit of 1 MiB, so that each reaches the guard it is meant for.
    const roomy = make({ maxBodyBytes: 1024 * 1024 })
    for (const [query, code] of hostile) {
      const { status, body } = await answer(await roomy(post({ query })))
      expect(status).toBe(200)
      expect(body.errors?.[0]?.extensions['code']).toBe(code)
    }
  })

  test('JSON nested 50,000 deep in the variables is refused with a code, not a crash', async () => {
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`
    const body = `{"query":"query ($n: Int) { items(first: $n) { id } }","variables":{"n":${deep}}}`
    const { status, body: answered } = await answer(await handler(post(body)))
    expect(status).toBe(400)
    expect(answered.errors?.[0]?.extensions).toEqual({ code: 'BAD_REQUEST', limit: 64 })
  })

  test('a resolver that throws an Error is masked as INTERNAL_SERVER_ERROR and reported; the rest of the data stays', async () => {
    const reported: unknown[] = []
    const masked = make({ onError: (error) => reported.push(error) })
    const { status, body } = await answer(await masked(post({ query: '{ hello boom }' })))
    expect(status).toBe(200)
    expect(body.data).toEqual({ hello: 'hello world', boom: null })
    expect(body.errors).toEqual([
      {
        message: 'Internal server error.',
        locations: [{ line: 1, column: 9 }],
        path: ['boom'],
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      },
    ])
    expect(JSON.stringify(body)).not.toContain('hunter2')
    expect(String(reported[0])).toContain('hunter2')
  })

  test('a GraphQLError with a code keeps its message and extensions (partial result)', async () => {
    const { body } = await answer(await handler(post({ query: '{ hello refused }' })))
    expect(body.data).toEqual({ hello: 'hello world', refused: null })
    expect(body.errors?.[0]).toMatchObject({
      message: 'Not yours.',
      path: ['refused'],
      extensions: { code: 'FORBIDDEN', scopes: ['read:secrets'] },
    })
  })

  test('mutations run their top-level fields in series (GraphQL spec §6.2.2)', async () => {
    const log: string[] = []
    const serial = make({ rootValue: makeRootValue(log) })
    const { body } = await answer(
      await serial(
        post({ query: 'mutation { a: step(label: "a") b: step(label: "b") c: step(label: "c") }' }),
      ),
    )
    expect(body.data).toEqual({ a: 'a', b: 'b', c: 'c' })
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
    // Queries resolve their fields concurrently: the same resolvers interleave.
    const concurrentLog: string[] = []
    const root = makeRootValue(concurrentLog)
    await Promise.all([
      (root['step'] as (args: { label: string }) => Promise<string>)({ label: 'x' }),
      (root['step'] as (args: { label: string }) => Promise<string>)({ label: 'y' }),
    ])
    expect(concurrentLog).toEqual(['start x', 'start y', 'end x', 'end y'])
  })

  test('a subscription over plain HTTP is refused with a code', async () => {
    const { body } = await answer(await handler(post({ query: 'subscription { count(to: 2) }' })))
    expect(body.errors?.[0]?.extensions['code']).toBe('BAD_REQUEST')
  })

  test('the default context carries the request and the principal', async () => {
    const request = post({ query: '{ whoami }' })
    setPrincipal(request, { subject: 'alice', scopes: [], claims: {} })
    expect((await answer(await handler(request))).body.data).toEqual({ whoami: 'alice' })
    const custom = make({
      context: (_request, prepared) => ({ principal: { subject: `cost ${prepared.cost}` } }),
    })
    expect((await answer(await custom(post({ query: '{ whoami }' })))).body.data).toEqual({
      whoami: 'cost 0',
    })
  })

  test('observers that throw break nothing', async () => {
    const reported: unknown[] = []
    const throwing = make({
      onEvent: () => {
        throw new Error('metrics down')
      },
      onError: (error) => {
        reported.push(error)
        throw new Error('logger down')
      },
    })
    const { status, body } = await answer(await throwing(post({ query: '{ hello boom }' })))
    expect(status).toBe(200)
    expect(body.data).toEqual({ hello: 'hello world', boom: null })
    expect(reported.map(String)).toContain('Error: metrics down')
    expect((await throwing(post('[]'))).status).toBe(400)
  })

  test('onEvent tells each refusal by code and each operation with its cost', async () => {
    const events: GraphQLHandlerEvent[] = []
    const observed = make({ onEvent: (event) => events.push(event) })
    await observed(post({ query: '{ nope }' }))
    await observed(post('[]'))
    await observed(post({ query: 'query Named { items(first: 2) { related(first: 2) { id } } }' }))
    expect(events.map(({ request: _request, ...event }) => event)).toEqual([
      { type: 'rejected', code: 'GRAPHQL_VALIDATION_FAILED' },
      { type: 'rejected', code: 'BAD_REQUEST' },
      { type: 'operation', operation: 'query', operationName: 'Named', cost: 3 },
    ])
  })
})

describe('rate limit by cost', () => {
  function limited(quota: number) {
    const limiter = createRateLimiter({
      store: new MemoryRateLimitStore(),
      policies: [{ name: 'cost', quota, windowSeconds: 3600 }],
      clock: () => 1_700_000_000_000,
    })
    return make({ rateLimit: { limiter, key: () => 'client-1' } })
  }
  const query = 'query ($n: Int) { items(first: $n) { related(first: 1) { id } } }'

  test('charges max(1, ceil(cost)) and reports RateLimit headers and extensions.throttle', async () => {
    const handler = limited(100)
    // cost 1 + 9 × 1 = 10
    const first = await answer(await handler(post({ query, variables: { n: 9 } })))
    expect(first.status).toBe(200)
    expect(first.headers.get('ratelimit-remaining')).toBe('90')
    expect(first.headers.get('ratelimit-limit')).toBe('100')
    expect(first.body.extensions).toMatchObject({
      cost: { requested: 10 },
      throttle: { limit: 100, remaining: 90 },
    })
    // cost 0 still costs 1
    const cheap = await answer(await handler(post({ query: '{ hello }' })))
    expect(cheap.headers.get('ratelimit-remaining')).toBe('89')
  })

  test('an operation over the remaining quota: 429 RATE_LIMITED with Retry-After, nothing executed', async () => {
    const log: string[] = []
    const limiter = createRateLimiter({
      store: new MemoryRateLimitStore(),
      policies: [{ name: 'cost', quota: 30, windowSeconds: 3600 }],
      clock: () => 1_700_000_000_000,
    })
    const handler = make({
      rootValue: makeRootValue(log),
      rateLimit: { limiter, key: () => 'client-2' },
    })
    expect((await handler(post({ query, variables: { n: 19 } }))).status).toBe(200) // 20
    const mutation = await answer(await handler(post({ query: 'mutation { step(label: "x") }' }))) // mutationCost 10
    expect(mutation.status).toBe(200)
    expect(log).toEqual(['start x', 'end x'])
    const over = await answer(await handler(post({ query: 'mutation { step(label: "y") }' }))) // 10 > 0 left
    expect(over.status).toBe(429)
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(over.headers.get('ratelimit-remaining')).toBe('0')
    expect(over.body.errors).toHaveLength(1)
    expect(over.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', cost: 10 })
  })

  test('a refused document still costs 1', async () => {
    const handler = limited(5)
    const invalid = await answer(await handler(post({ query: '{ nope }' })))
    expect(invalid.body.errors?.[0]?.extensions['code']).toBe('GRAPHQL_VALIDATION_FAILED')
    expect(invalid.headers.get('ratelimit-remaining')).toBe('4')
  })

  test('a limiter whose store fails lets the operation run (fail open) and reports it', async () => {
    const reported: unknown[] = []
    const handler = make({
      rateLimit: {
        limiter: createRateLimiter({
          store: {
            consume: () => Promise.reject(new Error('redis down')),
            reset: () => Promise.resolve(),
          },
          policies: [{ name: 'cost', quota: 5, windowSeconds: 1 }],
        }),
        key: () => 'k',
      },
      onError: (error) => reported.push(error),
    })
    const { status, body } = await answer(await handler(post({ query: '{ hello }' })))
    expect(status).toBe(200)
    expect(body.data).toEqual({ hello: 'hello world' })
    expect(reported).toHaveLength(1)
  })
})
