import { createHash } from 'node:crypto'
import type { SubscribePayload } from 'graphql-ws'
import { afterEach, describe, expect, test } from 'vitest'
import {
  createGraphQLHandler,
  createOperationPreparer,
  MemoryPersistedDocumentStore,
} from '../src/index.ts'
import type { GraphQLWebSocketEvent } from '../src/ws/index.ts'
import type { Harness } from './ws-support.ts'
import { closeCode, collect, MemoryPubSub, makeSchema, raw, start, take } from './ws-support.ts'

// graphql-ws PROTOCOL.md (the `graphql-transport-ws` subprotocol), driven by graphql-ws's own
// client over `ws`, against a real HTTP server on port 0.

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe('subscriptions', () => {
  test('events published after the subscription started reach the client, in order', async () => {
    const pubsub = new MemoryPubSub()
    const subscribed = deferred()
    const ended = deferred()
    harness = await start({
      schema: makeSchema(pubsub, { subscribed: subscribed.resolve, ended: ended.resolve }),
    })
    const client = harness.client()
    const received: unknown[] = []
    const all = deferred()
    const stop = client.subscribe(
      { query: 'subscription { orderChanged { id } }' },
      {
        next: (result) => {
          received.push(result)
          if (received.length === 3) all.resolve()
        },
        error: () => {},
        complete: () => {},
      },
    )
    await subscribed.promise
    for (const id of ['o1', 'o2', 'o3']) await pubsub.publish('orders', { id })
    await all.promise
    // Each event carries the operation's requested cost, as results over HTTP do.
    const extensions = { cost: { requested: 1, limit: 1000 } }
    expect(received).toEqual([
      { data: { orderChanged: { id: 'o1' } }, extensions },
      { data: { orderChanged: { id: 'o2' } }, extensions },
      { data: { orderChanged: { id: 'o3' } }, extensions },
    ])
    // The client's `complete` ends the server's iterator (PROTOCOL.md, Complete).
    stop()
    await ended.promise
  })

  test('closing the socket ends the server iterator', async () => {
    const pubsub = new MemoryPubSub()
    const subscribed = deferred()
    const ended = deferred()
    harness = await start({
      schema: makeSchema(pubsub, { subscribed: subscribed.resolve, ended: ended.resolve }),
    })
    const socket = await raw(harness.url)
    socket.send({ type: 'connection_init', payload: { authorization: 'Bearer reader' } })
    await socket.message((m) => m['type'] === 'connection_ack')
    socket.send({
      id: '1',
      type: 'subscribe',
      payload: { query: 'subscription { orderChanged { id } }' },
    })
    await subscribed.promise
    socket.socket.terminate()
    await ended.promise
  })

  test('a field the principal lacks the scope for: FORBIDDEN at its path, the rest kept', async () => {
    const pubsub = new MemoryPubSub()
    const subscribed = deferred()
    harness = await start({ schema: makeSchema(pubsub, { subscribed: subscribed.resolve }) })
    const outcome = take(
      harness.client(),
      { query: 'subscription { orderChanged { id total } }' },
      1,
    )
    await subscribed.promise
    await pubsub.publish('orders', { id: 'o1', total: 5 })
    const results = await outcome
    expect(results[0]).toEqual({
      data: { orderChanged: { id: 'o1', total: null } },
      errors: [
        {
          message: 'This field requires the scopes admin.',
          locations: [{ line: 1, column: 34 }],
          path: ['orderChanged', 'total'],
          extensions: { code: 'FORBIDDEN', scopes: ['admin'] },
        },
      ],
    })
  })

  test('a subscription refused when it starts: FORBIDDEN, then complete', async () => {
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      authenticate: async () => ({ subject: 'nobody', scopes: [], claims: {} }),
    })
    const { results, error } = await collect(harness.client(), {
      query: 'subscription { orderChanged { id } }',
    })
    expect(error).toBeUndefined()
    expect(results).toHaveLength(1)
    expect(results[0]!.errors?.[0]?.extensions).toEqual({
      code: 'FORBIDDEN',
      scopes: ['read:orders'],
    })
  })

  test('a stream that throws: one masked error message, the cause reported', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const { results, error } = await collect(harness.client(), {
      query: 'subscription { failing }',
    })
    expect(results).toEqual([{ data: { failing: 1 } }])
    expect(error).toEqual([
      { message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } },
    ])
    expect(String(harness.errors[0])).toContain('secret detail')
  })
})

describe('queries and mutations', () => {
  test('a query and a mutation answer one next, then complete', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const client = harness.client()
    expect(await collect(client, { query: '{ hello whoami }' })).toEqual({
      results: [{ data: { hello: 'world', whoami: 'reader' } }],
    })
    expect(await collect(client, { query: 'mutation { bump }' })).toEqual({
      results: [{ data: { bump: 1 } }],
    })
  })

  test('a resolver error is masked as INTERNAL_SERVER_ERROR and reported', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const { results } = await collect(harness.client(), { query: '{ hello fail }' })
    expect(results).toEqual([
      {
        data: { hello: 'world', fail: null },
        errors: [
          {
            message: 'Internal server error.',
            locations: [{ line: 1, column: 9 }],
            path: ['fail'],
            extensions: { code: 'INTERNAL_SERVER_ERROR' },
          },
        ],
      },
    ])
    expect(String(harness.errors[0])).toContain('hunter2')
    expect(JSON.stringify(results)).not.toContain('hunter2')
  })

  test('operations: a type not served answers METHOD_NOT_ALLOWED', async () => {
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      operations: ['subscription', 'query'],
    })
    const { error } = await collect(harness.client(), { query: 'mutation { bump }' })
    expect((error as { extensions: unknown }[])[0]!.extensions).toEqual({
      code: 'METHOD_NOT_ALLOWED',
    })
  })

  test('the context option builds the context value from the principal and the connection', async () => {
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      context: (principal, { connectionParams, request }) => ({
        principal: {
          ...principal!,
          subject: `${principal?.subject}@${String(connectionParams?.['device'])}`,
        },
        remote: request.socket.remoteAddress,
      }),
    })
    const client = harness.client({ authorization: 'Bearer reader', device: 'phone' })
    expect((await collect(client, { query: '{ whoami }' })).results).toEqual([
      { data: { whoami: 'reader@phone' } },
    ])
  })
})

test('a context function that rejects: INTERNAL_SERVER_ERROR, reported', async () => {
  harness = await start({
    schema: makeSchema(new MemoryPubSub()),
    context: async () => {
      throw new Error('session store down')
    },
  })
  const { error } = await collect(harness.client(), { query: '{ hello }' })
  expect(error).toEqual([
    { message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } },
  ])
  expect(String(harness.errors[0])).toContain('session store down')
})

describe('authentication from connection_init', () => {
  test('MUST close with 4403 Forbidden when authenticate answers undefined', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const { error } = await collect(harness.client({ authorization: 'Bearer forged' }), {
      query: '{ hello }',
    })
    expect(closeCode(error)).toBe(4403)
  })

  test('no payload at all: 4403', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const socket = await raw(harness.url)
    socket.send({ type: 'connection_init' })
    expect((await socket.closed).code).toBe(4403)
  })

  test('authenticate rejecting: 4500 without its message, the error reported', async () => {
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      authenticate: async () => {
        throw new Error('JWKS down: internal host 10.0.0.7')
      },
    })
    const socket = await raw(harness.url)
    socket.send({ type: 'connection_init', payload: { authorization: 'Bearer reader' } })
    const closed = await socket.closed
    expect(closed.code).toBe(4500)
    expect(closed.reason).not.toContain('10.0.0.7')
    expect(String(harness.errors[0])).toContain('JWKS down')
  })

  test('credentials already expired (claims.exp, RFC 7519 §4.1.4): 4403', async () => {
    const now = 1_800_000_000_000
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      clock: () => now,
      authenticate: async () => ({ subject: 'ada', scopes: [], claims: { exp: now / 1000 } }),
    })
    const socket = await raw(harness.url)
    socket.send({ type: 'connection_init' })
    expect((await socket.closed).code).toBe(4403)
  })

  test('credentials that expire later close the socket with 4403 then', async () => {
    const now = 1_800_000_000_000
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      clock: () => now,
      // 20 ms of validity left by the injected clock.
      authenticate: async () => ({
        subject: 'ada',
        scopes: [],
        claims: { exp: (now + 20) / 1000 },
      }),
    })
    const socket = await raw(harness.url)
    socket.send({ type: 'connection_init' })
    await socket.message((m) => m['type'] === 'connection_ack')
    const closed = await socket.closed
    expect(closed).toEqual({ code: 4403, reason: 'Forbidden: the credentials expired' })
  })

  test('without authenticate every connection is accepted with no principal', async () => {
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      authenticate: undefined as never,
    })
    expect((await collect(harness.client({}), { query: '{ whoami }' })).results).toEqual([
      { data: { whoami: null } },
    ])
  })
})

describe('the same operation preparation as HTTP', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['a parse error', { query: '{ hello ' }, 'GRAPHQL_PARSE_FAILED'],
    ['an unknown field', { query: '{ nope }' }, 'GRAPHQL_VALIDATION_FAILED'],
    [
      'a variable that does not coerce',
      { query: 'query ($b: Boolean!) { hello @include(if: $b) }', variables: { b: 'x' } },
      'BAD_USER_INPUT',
    ],
    [
      'an unknown operation name',
      { query: 'query A { hello }', operationName: 'B' },
      'OPERATION_NOT_FOUND',
    ],
    [
      'a query deeper than maxDepth',
      { query: `{ deep ${'{ deep '.repeat(30)}{ leaf }${' }'.repeat(30)} }` },
      'DEPTH_LIMIT_EXCEEDED',
    ],
    [
      'an unknown persisted query hash',
      {
        query: '',
        extensions: {
          persistedQuery: {
            version: 1,
            sha256Hash: createHash('sha256').update('{ x }').digest('hex'),
          },
        },
      },
      'PERSISTED_QUERY_NOT_FOUND',
    ],
  ]
  for (const [name, payload, code] of cases) {
    test(`${name}: one error message with code ${code}, the socket stays open`, async () => {
      harness ??= await start({ schema: makeSchema(new MemoryPubSub()) })
      const socket = await raw(harness.url)
      socket.send({ type: 'connection_init', payload: { authorization: 'Bearer reader' } })
      await socket.message((m) => m['type'] === 'connection_ack')
      socket.send({ id: 'op', type: 'subscribe', payload })
      const message = await socket.message((m) => m['id'] === 'op')
      expect(message['type']).toBe('error')
      const errors = message['payload'] as { extensions: { code: string } }[]
      expect(errors.map((error) => error.extensions.code)).toEqual([code])
      // Still usable: the next operation runs.
      socket.send({ id: 'ok', type: 'subscribe', payload: { query: '{ hello }' } })
      expect(await socket.message((m) => m['id'] === 'ok')).toEqual({
        id: 'ok',
        type: 'next',
        payload: { data: { hello: 'world' }, extensions: { cost: { requested: 0, limit: 1000 } } },
      })
      socket.socket.close()
    })
  }

  test('APQ over the socket: hash only → NOT_FOUND, hash + query → runs, hash only → runs', async () => {
    harness = await start({ schema: makeSchema(new MemoryPubSub()) })
    const client = harness.client()
    const query = '{ hello }'
    const persistedQuery = {
      version: 1,
      sha256Hash: createHash('sha256').update(query).digest('hex'),
    }
    const miss = await collect(client, { query: '', extensions: { persistedQuery } })
    expect((miss.error as { extensions: { code: string } }[])[0]!.extensions.code).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    )
    expect((await collect(client, { query, extensions: { persistedQuery } })).results).toEqual([
      { data: { hello: 'world' } },
    ])
    expect((await collect(client, { query: '', extensions: { persistedQuery } })).results).toEqual([
      { data: { hello: 'world' } },
    ])
  })
})

describe('persisted documents shared with the HTTP endpoint', () => {
  const query = '{ hello }'
  const sha256Hash = createHash('sha256').update(query).digest('hex')

  test('a document registered over HTTP (APQ) runs by its hash over the socket', async () => {
    const store = new MemoryPersistedDocumentStore()
    const schema = makeSchema(new MemoryPubSub())
    const http = createGraphQLHandler({ schema, persistedQueries: { store } })
    harness = await start({ schema, persistedQueries: { store } })
    const persistedQuery = { version: 1, sha256Hash }
    const registered = await http(
      new Request('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, extensions: { persistedQuery } }),
      }),
    )
    expect(registered.status).toBe(200)
    expect(
      (await collect(harness.client(), { query: '', extensions: { persistedQuery } })).results,
    ).toEqual([{ data: { hello: 'world' } }])
  })

  test('allow-list mode: a registered documentId runs, a full document is PERSISTED_QUERY_ONLY', async () => {
    const store = new MemoryPersistedDocumentStore()
    await store.set(`sha256:${sha256Hash}`, query)
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      persistedQueries: { store, mode: 'allow-list' },
    })
    const client = harness.client()
    // graphql-ws's payload carries `query`; the id travels as an extra member, as over HTTP.
    const byId = { query: '', documentId: `sha256:${sha256Hash}` } as SubscribePayload
    expect((await collect(client, byId)).results).toEqual([{ data: { hello: 'world' } }])
    const refused = await collect(client, { query })
    expect((refused.error as { extensions: { code: string } }[])[0]!.extensions.code).toBe(
      'PERSISTED_QUERY_ONLY',
    )
  })

  test('a preparer given is the one used', async () => {
    const schema = makeSchema(new MemoryPubSub())
    const preparer = createOperationPreparer({ schema, guards: { maxDepth: 1 } })
    harness = await start({ schema, preparer })
    const { error } = await collect(harness.client(), { query: '{ deep { leaf } }' })
    expect((error as { extensions: { code: string } }[])[0]!.extensions.code).toBe(
      'DEPTH_LIMIT_EXCEEDED',
    )
  })
})

describe('onEvent', () => {
  test('admitted and refused operations, and the end of each socket with its code', async () => {
    const events: GraphQLWebSocketEvent[] = []
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      onEvent: (event) => events.push(event),
    })
    const client = harness.client()
    await collect(client, { query: 'query Hi { hello }' })
    await collect(client, { query: '{ hello ' })
    const forbidden = await raw(harness.url)
    forbidden.send({ type: 'connection_init', payload: { authorization: 'Bearer forged' } })
    await forbidden.closed
    await client.dispose()
    // The server sees each close after the client does.
    const closedWith = (code: number) =>
      events.some((event) => event.type === 'closed' && event.code === code)
    while (!closedWith(4403) || !closedWith(1000)) {
      await new Promise((resolve) => setImmediate(resolve))
    }
    const summary = events.map(({ request: _, ...event }) => event)
    expect(summary).toEqual(
      expect.arrayContaining([
        { type: 'operation', operation: 'query', operationName: 'Hi', cost: 0 },
        { type: 'rejected', code: 'GRAPHQL_PARSE_FAILED' },
        { type: 'closed', code: 4403 },
        { type: 'closed', code: 1000 },
      ]),
    )
    // graphql-ws's client is lazy: it may close and reopen its socket between operations.
    expect(summary.filter((event) => event.type !== 'closed')).toHaveLength(2)
  })
})
