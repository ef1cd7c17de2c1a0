// /graphql on the service's Fetch handler: the same orders, tokens, scopes, validation, cursors,
// Idempotency-Keys, webhooks and rate limit as /v1 (docs/service.md, "GraphQL"). The transports
// with real clients (graphql-ws, graphql-sse, Apollo Client) are in graphql-clients.test.ts.
import { parse, subscribe } from 'graphql'
import { beforeEach, describe, expect, test } from 'vitest'
import type { Service, ServiceOptions } from '../src/app.ts'
import { createService } from '../src/app.ts'
import { createWebhooks } from '../src/webhooks/setup.ts'
import { clientCredentialsToken } from './oauth-client.ts'

const BASE = 'http://service.test'
const ALL = 'read:orders write:orders manage:webhooks'

interface GraphQLBody {
  data?: Record<string, unknown> | null
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[]
  extensions?: Record<string, unknown>
}

let service: Service
// What the service scheduled (the second half of a cancellation), run when a test chooses.
const tasks: (() => void)[] = []
let tokens: Record<string, string>

async function start(options: ServiceOptions = {}): Promise<void> {
  service = createService({
    clock: () => Date.UTC(2026, 10, 22, 10, 0, 0),
    schedule: (task) => tasks.push(task),
    publicUrl: 'https://api.example',
    rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
    clientAddress: () => '192.0.2.1',
    ...options,
  })
  tokens = {}
  for (const scope of [ALL, 'read:orders', 'write:orders', 'manage:webhooks']) {
    tokens[scope] = await clientCredentialsToken(service, BASE, scope)
  }
}

beforeEach(() => start())

function post(
  body: unknown,
  init: { scope?: string | null; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers = new Headers({ 'content-type': 'application/json', ...init.headers })
  const scope = init.scope === undefined ? ALL : init.scope
  if (scope !== null) headers.set('authorization', `Bearer ${tokens[scope]}`)
  return service(
    new Request(`${BASE}/graphql`, { method: 'POST', headers, body: JSON.stringify(body) }),
  )
}

async function run(
  query: string,
  variables: Record<string, unknown> = {},
  scope: string = ALL,
): Promise<GraphQLBody> {
  const response = await post({ query, variables }, { scope })
  expect(response.status).toBe(200)
  return (await response.json()) as GraphQLBody
}

const ORDER_FIELDS = 'id status customer items { sku quantity } note version createdAt updatedAt'
const CREATE = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { ${ORDER_FIELDS} } }`
const newOrder = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }

async function restCreate(body: unknown = newOrder, headers: Record<string, string> = {}) {
  return service(
    new Request(`${BASE}/v1/orders`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens[ALL]}`,
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify(body),
    }),
  )
}

describe('the same orders as /v1/orders', () => {
  test('an order created over REST reads the same over GraphQL, and the reverse', async () => {
    const rest = (await (await restCreate()).json()) as Record<string, unknown>
    const created = await run(CREATE, { input: { ...newOrder, note: 'Gift wrap' } })
    expect(created.errors).toBeUndefined()
    const order = created.data?.['createOrder'] as Record<string, unknown>
    expect(order).toMatchObject({
      status: 'OPEN',
      customer: 'Ada Lovelace',
      note: 'Gift wrap',
      version: 1,
    })
    expect(order['id']).toMatch(/^ord_[0-9A-HJKMNP-TV-Z]{26}$/)

    const read = await run(`query ($id: ID!) { order(id: $id) { ${ORDER_FIELDS} } }`, {
      id: rest['id'],
    })
    expect(read.data?.['order']).toEqual({
      id: rest['id'],
      status: 'OPEN',
      customer: rest['customer'],
      items: rest['items'],
      note: null,
      version: 1,
      createdAt: rest['created_at'],
      updatedAt: rest['updated_at'],
    })
    const fromRest = await service(
      new Request(`${BASE}/v1/orders/${order['id']}`, {
        headers: { authorization: `Bearer ${tokens[ALL]}` },
      }),
    )
    expect(await fromRest.json()).toMatchObject({ id: order['id'], note: 'Gift wrap' })
    for (const id of ['ord_none', 'x'.repeat(65), '../v1', '']) {
      expect((await run('query ($id: ID!) { order(id: $id) { id } }', { id })).data).toEqual({
        order: null,
      })
    }
  })

  test('createOrder validates as POST /v1/orders: BAD_USER_INPUT with the same JSON Pointers as the 422', async () => {
    const bad = {
      customer: 'Ada\u0007',
      items: [{ sku: 'no spaces', quantity: 0 }],
    }
    const rest = await restCreate(bad)
    expect(rest.status).toBe(422)
    const pointers = ((await rest.json()).errors as { pointer: string }[]).map((e) => e.pointer)
    const result = await run(CREATE, { input: bad })
    expect(result.data).toBeNull()
    expect(result.errors).toHaveLength(1)
    const [error] = result.errors ?? []
    expect(error?.extensions?.['code']).toBe('BAD_USER_INPUT')
    expect(error?.path).toEqual(['createOrder'])
    const graphqlPointers = ((error?.extensions?.['errors'] ?? []) as { pointer: string }[]).map(
      (e) => e.pointer,
    )
    expect(graphqlPointers.sort()).toEqual(pointers.sort())
    expect(graphqlPointers.sort()).toEqual(['/customer', '/items/0/quantity', '/items/0/sku'])
    // Nothing was created by either.
    const list = await run('{ orders { edges { node { id } } } }')
    expect(list.data).toEqual({ orders: { edges: [] } })
  })

  test('Relay pages use the signed cursors of GET /v1/orders, in both directions', async () => {
    for (let index = 0; index < 5; index += 1) await restCreate()
    const page = `query ($first: Int, $after: String) {
      orders(first: $first, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } }
    }`
    const first = (await run(page, { first: 2 })).data?.['orders'] as {
      edges: { cursor: string; node: { id: string } }[]
      pageInfo: { hasNextPage: boolean; endCursor: string }
    }
    expect(first.edges).toHaveLength(2)
    expect(first.pageInfo.hasNextPage).toBe(true)
    // GraphQL's endCursor continues the REST list…
    const rest = await service(
      new Request(`${BASE}/v1/orders?limit=2&after=${first.pageInfo.endCursor}`, {
        headers: { authorization: `Bearer ${tokens[ALL]}` },
      }),
    )
    const restPage = (await rest.json()) as { data: { id: string }[]; next_cursor: string }
    expect(restPage.data.map((order) => order.id)).not.toContain(first.edges[1]?.node.id)
    expect(restPage.data).toHaveLength(2)
    // …and REST's next_cursor continues the GraphQL one.
    const last = (await run(page, { first: 10, after: restPage.next_cursor })).data?.['orders'] as {
      edges: unknown[]
      pageInfo: { hasNextPage: boolean }
    }
    expect(last.edges).toHaveLength(1)
    expect(last.pageInfo.hasNextPage).toBe(false)
    // A cursor bound to another filter, or forged, is refused with a code.
    const open = (await run('{ orders(first: 1, status: OPEN) { pageInfo { endCursor } } }'))
      .data?.['orders'] as { pageInfo: { endCursor: string } }
    for (const [after, reason] of [
      [open.pageInfo.endCursor, 'CURSOR_QUERY_MISMATCH'],
      ['forged', 'CURSOR_MALFORMED'],
    ]) {
      const refused = await run(page, { first: 1, after })
      expect(refused.errors?.[0]?.extensions, after).toMatchObject({
        code: 'BAD_USER_INPUT',
        reason,
      })
    }
  })

  test('a page over 100 is refused before execution (PAGE_SIZE_EXCEEDED), as limit=101 is a 400', async () => {
    const response = await post({ query: '{ orders(first: 101) { edges { node { id } } } }' })
    const body = (await response.json()) as GraphQLBody
    expect(body.errors?.[0]?.extensions).toMatchObject({
      code: 'PAGE_SIZE_EXCEEDED',
      limit: 100,
      actual: 101,
    })
  })
})

describe('orderChanged', () => {
  test('every write of the order store is published once it is done: create, update, cancel, its completion, delete', async () => {
    // graphql-js's own subscribe on the service's schema: it resolves once the pub/sub
    // subscription is in place, so every write after it is seen.
    const principal = await service.graphql.authenticate(`Bearer ${tokens['read:orders']}`)
    const changes = (await subscribe({
      schema: service.graphql.operations.schema,
      document: parse('subscription { orderChanged { id status note version } }'),
      contextValue: { principal },
    })) as AsyncIterableIterator<{ data?: { orderChanged: Record<string, unknown> } }>
    const rest = (method: string, path: string, body?: unknown, ifMatch?: string) =>
      service(
        new Request(`${BASE}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${tokens[ALL]}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }),
          },
          body: body === undefined ? null : JSON.stringify(body),
        }),
      )
    const { id } = (await (await restCreate()).json()) as { id: string }
    expect((await rest('PATCH', `/v1/orders/${id}`, { note: 'Gift wrap' }, '"1"')).status).toBe(200)
    // A write that writes nothing publishes nothing: a stale If-Match (412), here and below a
    // cancel of the deleted order (404).
    expect((await rest('PATCH', `/v1/orders/${id}`, { note: 'Stale' }, '"1"')).status).toBe(412)
    expect((await rest('POST', `/v1/orders/${id}/cancel`)).status).toBe(202)
    for (const task of tasks.splice(0)) task()
    // The cancellation's second half ran: the order is cancelled once its write resolved.
    let order: { version: number } | undefined
    while (order?.version !== 4) {
      order = (await (await rest('GET', `/v1/orders/${id}`)).json()) as { version: number }
    }
    expect((await rest('DELETE', `/v1/orders/${id}`, undefined, '"4"')).status).toBe(204)
    expect((await rest('POST', `/v1/orders/${id}/cancel`)).status).toBe(404)
    const created = await run(CREATE, { input: newOrder })
    const seen: unknown[] = []
    for (let index = 0; index < 6; index += 1)
      seen.push((await changes.next()).value?.data?.orderChanged)
    expect(seen).toEqual([
      { id, status: 'OPEN', note: null, version: 1 },
      { id, status: 'OPEN', note: 'Gift wrap', version: 2 },
      { id, status: 'CANCELLING', note: 'Gift wrap', version: 3 },
      { id, status: 'CANCELLED', note: 'Gift wrap', version: 4 },
      // Deleted: the order as it was last.
      { id, status: 'CANCELLED', note: 'Gift wrap', version: 4 },
      {
        id: (created.data?.['createOrder'] as { id: string } | undefined)?.id,
        status: 'OPEN',
        note: null,
        version: 1,
      },
    ])
    await changes.return?.()
  })
})

describe('tokens and scopes', () => {
  test('no token, or a bad one: 401 with the Bearer challenge, as /v1', async () => {
    const none = await post({ query: '{ viewer { scopes } }' }, { scope: null })
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/)
    const bad = await service(
      new Request(`${BASE}/graphql?query=${encodeURIComponent('{ viewer { scopes } }')}`, {
        headers: { authorization: 'Bearer not-a-token' },
      }),
    )
    expect(bad.status).toBe(401)
  })

  test('a field the token lacks the scope for is null with FORBIDDEN at its path; the rest is answered', async () => {
    const { id } = (await (await restCreate()).json()) as { id: string }
    const result = await run(
      `query ($id: ID!) { viewer { clientId scopes } order(id: $id) { id } }`,
      { id },
      'manage:webhooks',
    )
    expect(result.data).toEqual({
      viewer: { clientId: 'demo-backend', scopes: ['manage:webhooks'] },
      order: null,
    })
    expect(result.errors).toHaveLength(1)
    expect(result.errors?.[0]).toMatchObject({
      path: ['order'],
      extensions: { code: 'FORBIDDEN', scopes: ['read:orders'] },
    })
  })

  test('read:orders reads but cannot create; write:orders creates but cannot read a list', async () => {
    const refused = await run(CREATE, { input: newOrder }, 'read:orders')
    expect(refused.data).toBeNull()
    expect(refused.errors?.[0]).toMatchObject({
      path: ['createOrder'],
      extensions: { code: 'FORBIDDEN', scopes: ['write:orders'] },
    })
    const created = await run(
      'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }',
      { input: newOrder },
      'write:orders',
    )
    expect(created.errors).toBeUndefined()
    const list = await run('{ orders { edges { node { id } } } }', {}, 'write:orders')
    expect(list.data).toBeNull()
    expect(list.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN')
    const read = await run('{ orders { edges { node { id } } } }', {}, 'read:orders')
    expect(read.data?.['orders']).toEqual({ edges: [{ node: created.data?.['createOrder'] }] })
  })
})

describe('the write path of POST /v1/orders', () => {
  test('createOrder queues the order.created webhook, once per subscribed endpoint', async () => {
    // A receiver on a loopback origin (allowed explicitly); the worker is not started, so the
    // delivery stays queued for the test to read.
    const webhooks = createWebhooks({
      settings: { retry: undefined, timeoutMs: undefined, allowedOrigins: ['http://127.0.0.1:9'] },
    })
    await start({ webhooks })
    const { endpoint } = await webhooks.registry.create({
      url: 'http://127.0.0.1:9/orders',
      events: ['order.created'],
    })
    const created = await run(CREATE, { input: newOrder })
    const order = created.data?.['createOrder'] as { id: string }
    const queued = await webhooks.queue.list({ endpointId: endpoint.id, limit: 10 })
    expect(queued.map((delivery) => delivery.eventType)).toEqual(['order.created'])
    expect(JSON.parse(queued[0]?.payload ?? '{}').data.object).toMatchObject({
      id: order.id,
      status: 'open',
      customer: 'Ada Lovelace',
    })
  })

  test('an Idempotency-Key replays the first answer: one order, and another body with the key is a 409', async () => {
    const headers = { 'idempotency-key': 'gql-1' }
    const body = { query: CREATE, variables: { input: newOrder } }
    const first = await post(body, { headers })
    const firstBody = (await first.json()) as GraphQLBody
    const second = await post(body, { headers })
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    expect(await second.json()).toEqual(firstBody)
    const list = await run('{ orders { edges { node { id } } } }')
    expect(list.data?.['orders']).toEqual({ edges: [{ node: { id: expect.any(String) } }] })
    const other = await post(
      { query: CREATE, variables: { input: { ...newOrder, customer: 'Grace Hopper' } } },
      { headers },
    )
    expect(other.status).toBe(409)
  })
})

describe('cost and the rate limit', () => {
  test('each operation is charged its cost to the principal, on the budget /v1 charges 1 a request', async () => {
    await start({ rateLimits: [{ name: 'tests', quota: 10, windowSeconds: 3600 }] })
    const remaining = async (response: Response) => {
      await response.arrayBuffer()
      return response.headers.get('ratelimit-remaining')
    }
    // Three store reads: three units (two pages and an order; the viewer is free).
    const three = await post({
      query:
        '{ viewer { clientId } a: orders { edges { node { id } } } b: orders(first: 5) { pageInfo { hasNextPage } } c: order(id: "x") { id } }',
    })
    const body = (await three.clone().json()) as GraphQLBody
    expect(body.extensions?.['cost']).toMatchObject({ requested: 3 })
    expect(await remaining(three)).toBe('7')
    // A REST request: one more.
    expect(
      await remaining(
        await service(
          new Request(`${BASE}/v1/orders`, { headers: { authorization: `Bearer ${tokens[ALL]}` } }),
        ),
      ),
    ).toBe('6')
    // A free operation still costs one request.
    expect(await remaining(await post({ query: '{ viewer { scopes } }' }))).toBe('5')
    // A createOrder costs one unit, as POST /v1/orders.
    expect(await remaining(await post({ query: CREATE, variables: { input: newOrder } }))).toBe('4')
    // Over the budget: 429 with Retry-After and one RATE_LIMITED error; nothing executed.
    const over = await post({
      query:
        '{ a: orders { pageInfo { hasNextPage } } b: orders { pageInfo { hasNextPage } } c: orders { pageInfo { hasNextPage } } d: orders { pageInfo { hasNextPage } } e: orders { pageInfo { hasNextPage } } }',
    })
    expect(over.status).toBe(429)
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(((await over.json()) as GraphQLBody).errors?.[0]?.extensions?.['code']).toBe(
      'RATE_LIMITED',
    )
  })
})

describe('GraphQL over HTTP', () => {
  test('GET runs queries; a mutation over GET is 405 with Allow: POST', async () => {
    const get = (query: string) =>
      service(
        new Request(`${BASE}/graphql?query=${encodeURIComponent(query)}`, {
          headers: { authorization: `Bearer ${tokens[ALL]}` },
        }),
      )
    const query = await get('{ viewer { clientId } }')
    expect(query.status).toBe(200)
    // Per-user data, as every order response (docs/spec.md §4.3 rule 9).
    expect(query.headers.get('cache-control')).toBe('private, no-store')
    expect(await query.json()).toMatchObject({ data: { viewer: { clientId: 'demo-backend' } } })
    const mutation = await get(
      'mutation { createOrder(input: { customer: "A", items: [{ sku: "X", quantity: 1 }] }) { id } }',
    )
    expect(mutation.status).toBe(405)
    expect(mutation.headers.get('allow')).toBe('POST')
  })

  test('introspection answers by default, and is refused with INTROSPECTION_DISABLED when off', async () => {
    const on = await run('{ __schema { queryType { name } } }')
    expect(on.data).toEqual({ __schema: { queryType: { name: 'Query' } } })
    await start({ graphql: { introspection: false } })
    const response = await post({ query: '{ __schema { queryType { name } } }' })
    const off = (await response.json()) as GraphQLBody
    expect(off.errors?.[0]?.extensions?.['code']).toBe('INTROSPECTION_DISABLED')
  })

  test('hostile documents are refused with a code, before execution; the process keeps answering', async () => {
    const doubling = [
      '{ ...F0 }',
      ...Array.from(
        { length: 30 },
        (_, index) => `fragment F${index} on Query { ...F${index + 1} ...F${index + 1} }`,
      ),
      'fragment F30 on Query { viewer { clientId } }',
    ].join(' ')
    const table: [string, unknown, number, string][] = [
      ['fragment doubling to 2^30 nodes', { query: doubling }, 400, 'NODE_LIMIT_EXCEEDED'],
      [
        'a fragment cycle',
        { query: '{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }' },
        400,
        'GRAPHQL_VALIDATION_FAILED',
      ],
      [
        '1,000 aliases',
        { query: `{ ${'a: __typename '.repeat(1000)}}` },
        400,
        'ALIAS_LIMIT_EXCEEDED',
      ],
      [
        '10,000 aliases (over the token limit first)',
        { query: `{ ${'a:b '.repeat(10_000)}}` },
        400,
        'TOKEN_LIMIT_EXCEEDED',
      ],
      [
        'depth 1,000',
        { query: `${'{ a '.repeat(1000)}${'}'.repeat(1000)}` },
        400,
        'DEPTH_LIMIT_EXCEEDED',
      ],
      ['variables: []', { query: '{ viewer { scopes } }', variables: [] }, 400, 'BAD_REQUEST'],
      [
        'a huge variable list',
        {
          query: 'query ($ids: [ID!]!) { viewer { scopes } }',
          variables: { ids: Array.from({ length: 20_000 }, () => 'x') },
        },
        413,
        'BODY_TOO_LARGE',
      ],
      ['no document', { variables: {} }, 400, 'BAD_REQUEST'],
    ]
    for (const [name, body, status, code] of table) {
      const response = await post(body, {
        headers: { accept: 'application/graphql-response+json' },
      })
      const answer = (await response.json()) as GraphQLBody
      // Its code among the errors (a document over several limits gets one error each), and
      // nothing but coded errors: no data.
      expect([name, response.status, answer.data]).toEqual([name, status, undefined])
      const codes = answer.errors?.map((error) => error.extensions?.['code'])
      expect(codes, name).toContain(code)
      expect(codes?.every((each) => typeof each === 'string')).toBe(true)
    }
    expect((await run('{ viewer { clientId } }')).data).toEqual({
      viewer: { clientId: 'demo-backend' },
    })
  })
})
