// /graphql through the running service (src/main.ts in a process of its own) with the real
// clients: graphql-ws over a WebSocket (token in connection_init), graphql-sse over server-sent
// events (token in the Authorization header), and Apollo Client's persisted-query link over
// its HttpLink (the APQ exchange exactly as Apollo Client performs it).
import { createHash } from 'node:crypto'
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client'
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries'
import type { ExecutionResult } from 'graphql'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Changes } from './graphql-kit.ts'
import {
  graphqlCreate as kitGraphqlCreate,
  live as kitLive,
  restCreate as kitRestCreate,
  sseClient as kitSseClient,
  wsClient as kitWsClient,
  ORDER_CHANGED,
  until,
} from './graphql-kit.ts'
import { clientCredentialsToken } from './oauth-client.ts'
import type { ServiceProcess } from './running-service.ts'
import { startService } from './running-service.ts'

let service: ServiceProcess
let graphqlUrl: string
const tokens: Record<string, string> = {}

beforeAll(async () => {
  service = await startService({ RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_HOUR: '1000000' })
  graphqlUrl = `${service.base}/graphql`
  for (const scope of ['read:orders write:orders', 'manage:webhooks']) {
    tokens[scope] = await clientCredentialsToken(fetch, service.base, scope)
  }
})
afterAll(() => service?.stop())

const bearer = (scope = 'read:orders write:orders') => `Bearer ${tokens[scope]}`

const restCreate = (customer: string) => kitRestCreate(service.base, bearer(), customer)
const graphqlCreate = (customer: string) => kitGraphqlCreate(service.base, bearer(), customer)
const live = (changes: Changes) => kitLive(changes, () => restCreate('priming'))
const wsClient = (params: Record<string, unknown>) => kitWsClient(service.base, params)
const sseClient = (headers: Record<string, string>) => kitSseClient(service.base, headers)

describe('orderChanged, fed by writes from either interface', () => {
  test('a graphql-ws client (token in connection_init) gets the changes of a REST POST and of a GraphQL mutation', async () => {
    const client = wsClient({ authorization: bearer() })
    try {
      const changes = client.iterate({ query: ORDER_CHANGED }) as Changes
      await live(changes)
      const rest = await restCreate('Ada Lovelace')
      expect(await until(changes, rest.id)).toEqual({
        id: rest.id,
        status: 'OPEN',
        customer: 'Ada Lovelace',
        version: 1,
      })
      const mutation = await graphqlCreate('Grace Hopper')
      expect(await until(changes, mutation.id)).toEqual({ ...mutation, status: 'OPEN' })
      // An update over REST too: PATCH with the ETag of version 1.
      const patched = await fetch(`${service.base}/v1/orders/${rest.id}`, {
        method: 'PATCH',
        headers: {
          authorization: bearer(),
          'content-type': 'application/json',
          'if-match': '"1"',
        },
        body: JSON.stringify({ note: 'Gift wrap' }),
      })
      expect(patched.status).toBe(200)
      expect(await until(changes, rest.id)).toMatchObject({ version: 2 })
      await changes.return?.()
    } finally {
      await client.dispose()
    }
  })

  test('a graphql-sse client (token in the Authorization header) gets the changes of a REST POST and of a GraphQL mutation', async () => {
    const client = sseClient({ authorization: bearer() })
    try {
      const changes = client.iterate({ query: ORDER_CHANGED }) as Changes
      await live(changes)
      const rest = await restCreate('Ada Lovelace')
      expect(await until(changes, rest.id)).toMatchObject({ id: rest.id, status: 'OPEN' })
      const mutation = await graphqlCreate('Grace Hopper')
      expect(await until(changes, mutation.id)).toMatchObject({ customer: 'Grace Hopper' })
      await changes.return?.()
    } finally {
      client.dispose()
    }
  })
})

describe('orderChanged(id:)', () => {
  test('follows one order: the changes of others are not sent', async () => {
    const watched = await restCreate('Ada Lovelace')
    let version = watched.version
    // Each call writes the watched order (PATCH with the ETag it is at), so priming works here
    // too: the subscription is live once one of these arrives.
    const touch = async () => {
      const response = await fetch(`${service.base}/v1/orders/${watched.id}`, {
        method: 'PATCH',
        headers: {
          authorization: bearer(),
          'content-type': 'application/json',
          'if-match': `"${version}"`,
        },
        body: JSON.stringify({ note: `touch ${version}` }),
      })
      expect(response.status).toBe(200)
      version += 1
    }
    const client = wsClient({ authorization: bearer() })
    try {
      const changes = client.iterate({
        query: 'subscription ($id: ID) { orderChanged(id: $id) { id status customer version } }',
        variables: { id: watched.id },
      }) as Changes
      let arrived = false
      const first = changes.next().then((result) => {
        arrived = true
        return result
      })
      while (!arrived) {
        await touch()
        await new Promise((resolve) => setImmediate(resolve))
      }
      const arrival = (await first).value?.data?.orderChanged
      expect(arrival?.id).toBe(watched.id)
      // Drain what priming left, then: another order's change, then the watched one's.
      const last = version
      let seen = arrival?.version ?? last
      while (seen < last) {
        const { value } = await changes.next()
        seen = value?.data?.orderChanged.version ?? last
      }
      await restCreate('Grace Hopper')
      await touch()
      const next = await changes.next()
      expect(next.value?.data?.orderChanged).toMatchObject({ id: watched.id, version: last + 1 })
      await changes.return?.()
    } finally {
      await client.dispose()
    }
  })
})

describe('an Idempotency-Key on an event stream', () => {
  test('is ignored: each stream is live, none is stored and replayed', async () => {
    const headers = { authorization: bearer(), 'idempotency-key': 'stream-1' }
    for (let round = 0; round < 2; round += 1) {
      const client = sseClient(headers)
      try {
        const changes = client.iterate({ query: ORDER_CHANGED }) as Changes
        await live(changes)
        const order = await restCreate(`round ${round}`)
        expect(await until(changes, order.id)).toMatchObject({ customer: `round ${round}` })
        await changes.return?.()
      } finally {
        client.dispose()
      }
    }
  })
})

describe('authentication and scopes of subscriptions', () => {
  test('a WebSocket without a valid token in connection_init is closed with 4403 Forbidden', async () => {
    for (const params of [{}, { authorization: 'Bearer not-a-token' }]) {
      const client = wsClient(params)
      const closed = new Promise<number>((resolve) => {
        client.on('closed', (event) => resolve((event as { code: number }).code))
      })
      const changes = client.iterate({ query: ORDER_CHANGED })
      await expect(changes.next()).rejects.toBeDefined()
      expect(await closed).toBe(4403)
      await client.dispose()
    }
  })

  test('server-sent events without a token: 401, as /v1', async () => {
    const response = await fetch(graphqlUrl, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: ORDER_CHANGED }),
    })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/)
  })

  test('a token without read:orders subscribes to FORBIDDEN, over both transports', async () => {
    const ws = wsClient({ authorization: bearer('manage:webhooks') })
    try {
      const result = await ws.iterate({ query: ORDER_CHANGED }).next()
      expect(result.value?.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN')
    } finally {
      await ws.dispose()
    }
    const sse = sseClient({ authorization: bearer('manage:webhooks') })
    try {
      const result = await sse.iterate({ query: ORDER_CHANGED }).next()
      expect(result.value?.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN')
    } finally {
      sse.dispose()
    }
  })
})

describe('persisted queries with Apollo Client', () => {
  test('the APQ exchange as Apollo Client performs it: the hash alone, PersistedQueryNotFound, the hash with the query, then the hash alone', async () => {
    const sent: { method: string; body: Record<string, unknown> | null; url: string }[] = []
    const answers: ExecutionResult[] = []
    const recording: typeof fetch = async (input, init) => {
      const url = String(input)
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : null
      sent.push({ method: init?.method ?? 'GET', body, url })
      const response = await fetch(input, init)
      answers.push((await response.clone().json()) as ExecutionResult)
      return response
    }
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
    const apollo = () =>
      new ApolloClient({
        cache: new InMemoryCache(),
        link: new PersistedQueryLink({ sha256 }).concat(
          new HttpLink({ uri: graphqlUrl, fetch: recording, headers: { authorization: bearer() } }),
        ),
      })
    const order = await restCreate('Ada Lovelace')
    const query = gql`
      query Order($id: ID!) {
        order(id: $id) {
          id
          customer
        }
      }
    `
    const first = await apollo().query({ query, variables: { id: order.id } })
    expect(first.data).toEqual({
      order: { __typename: 'Order', id: order.id, customer: 'Ada Lovelace' },
    })
    // Hash only, refused as unknown; then the hash with the query, stored once it validated.
    expect(sent).toHaveLength(2)
    const [hashOnly = {}, withQuery = {}] = sent.map((request) => request.body ?? {})
    const { sha256Hash: hash } = (
      hashOnly['extensions'] as { persistedQuery: { sha256Hash: string } }
    ).persistedQuery
    expect(hashOnly).not.toHaveProperty('query')
    // (Apollo Client 4 also sends `extensions.clientLibrary`, its name and version.)
    expect(hashOnly['extensions']).toMatchObject({
      persistedQuery: { version: 1, sha256Hash: hash },
    })
    expect(answers[0]?.errors?.map((error) => error.extensions?.['code'])).toEqual([
      'PERSISTED_QUERY_NOT_FOUND',
    ])
    expect(sha256(withQuery['query'] as string)).toBe(hash)
    expect(withQuery['extensions']).toEqual(hashOnly['extensions'])
    // A fresh client (another page load): the hash alone is enough now.
    const second = await apollo().query({ query, variables: { id: order.id } })
    expect(second.data).toEqual(first.data)
    expect(sent).toHaveLength(3)
    expect(sent[2]?.body).not.toHaveProperty('query')
  })

  test('the unknown hash answers PERSISTED_QUERY_NOT_FOUND with HTTP 200 and no-cache', async () => {
    const response = await fetch(graphqlUrl, {
      method: 'POST',
      headers: { authorization: bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({
        extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } },
      }),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toMatch(/no-cache/)
    const body = (await response.json()) as ExecutionResult
    expect(body.errors?.[0]?.message).toBe('PersistedQueryNotFound')
    expect(body.errors?.[0]?.extensions?.['code']).toBe('PERSISTED_QUERY_NOT_FOUND')
  })
})

describe('the WebSocket draws on the same budget', () => {
  let small: ServiceProcess | undefined
  afterAll(() => small?.stop())

  test('operations over the WebSocket are charged their cost to the principal HTTP charges; mutations are HTTP only', async () => {
    small = await startService({ RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_PER_HOUR: '4' })
    // The token request is charged to the address, not to the client it is for.
    const token = await clientCredentialsToken(fetch, small.base, 'read:orders write:orders')
    const client = kitWsClient(small.base, { authorization: `Bearer ${token}` })
    try {
      const query = (text: string) => client.iterate({ query: text }).next()
      // Two operations of cost 1 each over the WebSocket, one over HTTP: 3 of 4.
      for (let index = 0; index < 2; index += 1) {
        const result = await query('{ orders(first: 1) { pageInfo { hasNextPage } } }')
        expect(result.value?.errors).toBeUndefined()
      }
      const http = await fetch(`${small.base}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { clientId } }' }),
      })
      expect(http.headers.get('ratelimit-remaining')).toBe('1')
      await http.arrayBuffer()
      // A mutation over the WebSocket is refused (no Idempotency-Key there), and not charged.
      await expect(
        query(
          'mutation { createOrder(input: { customer: "A", items: [{ sku: "X", quantity: 1 }] }) { id } }',
        ),
      ).rejects.toSatisfy((errors: { extensions?: { code?: string } }[]) =>
        errors.some((error) => error.extensions?.code === 'METHOD_NOT_ALLOWED'),
      )
      // Two pages: cost 2, over the 1 left: RATE_LIMITED, nothing runs.
      await expect(
        query('{ a: orders { pageInfo { hasNextPage } } b: orders { pageInfo { hasNextPage } } }'),
      ).rejects.toSatisfy((errors: { extensions?: { code?: string } }[]) =>
        errors.some((error) => error.extensions?.code === 'RATE_LIMITED'),
      )
      expect((await query('{ viewer { clientId } }')).value?.data).toEqual({
        viewer: { clientId: 'demo-backend' },
      })
      const refused = await fetch(`${small.base}/v1/orders`, {
        headers: { authorization: `Bearer ${token}` },
      })
      expect(refused.status).toBe(429)
    } finally {
      await client.dispose()
    }
  })
})

describe('JWT access tokens (ACCESS_TOKEN_FORMAT=jwt)', () => {
  let jwt: ServiceProcess | undefined
  afterAll(() => jwt?.stop())

  test('connection_init and the Authorization header take JWT access tokens too', async () => {
    jwt = await startService({ ACCESS_TOKEN_FORMAT: 'jwt' })
    const token = await clientCredentialsToken(fetch, jwt.base, 'read:orders write:orders')
    expect(token.split('.')).toHaveLength(3)
    const authorization = `Bearer ${token}`
    const ws = kitWsClient(jwt.base, { authorization })
    const sse = kitSseClient(jwt.base, { authorization })
    try {
      const overWs = ws.iterate({ query: ORDER_CHANGED }) as Changes
      const overSse = sse.iterate({ query: ORDER_CHANGED }) as Changes
      const base = jwt.base
      await kitLive(overWs, () => kitRestCreate(base, authorization, 'priming'))
      await kitLive(overSse, () => kitRestCreate(base, authorization, 'priming'))
      const order = await kitGraphqlCreate(base, authorization, 'Ada Lovelace')
      expect(await until(overWs, order.id)).toMatchObject({ customer: 'Ada Lovelace' })
      expect(await until(overSse, order.id)).toMatchObject({ customer: 'Ada Lovelace' })
      await overWs.return?.()
      await overSse.return?.()
    } finally {
      await ws.dispose()
      sse.dispose()
    }
  })
})
