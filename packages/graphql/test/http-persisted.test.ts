// Persisted documents over HTTP: Apollo's APQ with the real Apollo Client link
// (@apollo/client's PersistedQueryLink over HttpLink, against a real server), the
// GraphQL-over-HTTP `documentId` (Appendix A), allow-list mode with manifests, and
// `persistedQueries: false`.
import { createHash } from 'node:crypto'
import { ApolloClient, ApolloLink, gql, HttpLink, InMemoryCache } from '@apollo/client'
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { GraphQLHandlerOptions } from '../src/index.ts'
import { createGraphQLHandler, loadPersistedManifest } from '../src/index.ts'
import { MemoryPersistedDocumentStore } from '../src/stores.ts'
import type { Started } from './http-fixtures.ts'
import { adapters, makeRootValue, schema } from './http-fixtures.ts'

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')
const URL_ = 'http://localhost/graphql'

function post(body: unknown): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

function make(options: Partial<GraphQLHandlerOptions> = {}) {
  return createGraphQLHandler({ schema, rootValue: makeRootValue(), ...options })
}

async function json(response: Response) {
  return (await response.json()) as {
    data?: unknown
    errors?: { message: string; extensions: { code: string } }[]
  }
}

/** What Apollo Client sent, and what it got back, in order. */
interface Exchange {
  readonly method: string
  readonly url: string
  readonly accept: string | null
  readonly body: Record<string, unknown> | undefined
  readonly status: number
  readonly cacheControl: string | null
  readonly code: string | undefined
}

describe('APQ exactly as Apollo Client performs it (PersistedQueryLink over HttpLink, real server)', () => {
  const store = new MemoryPersistedDocumentStore()
  let server: Started
  beforeAll(async () => {
    server = await adapters['node (serve)']!(make({ persistedQueries: { store } }))
  })
  afterAll(() => server.close())

  function client(options: { useGETForHashedQueries?: boolean } = {}) {
    const exchanges: Exchange[] = []
    const recordingFetch = async (
      input: RequestInfo | URL,
      init?: RequestInit,
    ): Promise<Response> => {
      const response = await fetch(input, init)
      const copy = response.clone()
      const text = await copy.text()
      exchanges.push({
        method: init?.method ?? 'GET',
        url: String(input),
        accept: new Headers(init?.headers).get('accept'),
        body:
          typeof init?.body === 'string'
            ? (JSON.parse(init.body) as Record<string, unknown>)
            : undefined,
        status: response.status,
        cacheControl: response.headers.get('cache-control'),
        code: (JSON.parse(text) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]
          ?.extensions?.code,
      })
      return response
    }
    const link = ApolloLink.from([
      new PersistedQueryLink({ sha256, ...options }),
      new HttpLink({ uri: server.url, fetch: recordingFetch }),
    ])
    return { apollo: new ApolloClient({ link, cache: new InMemoryCache() }), exchanges }
  }

  test('hash only → PERSISTED_QUERY_NOT_FOUND (no-cache) → hash + query → stored → hash only works', async () => {
    const { apollo, exchanges } = client()
    const query = gql`
      query Greeting($name: String) {
        hello(name: $name)
      }
    `
    const first = await apollo.query({ query, variables: { name: 'apq' }, fetchPolicy: 'no-cache' })
    expect(first.data).toEqual({ hello: 'hello apq' })
    expect(exchanges).toHaveLength(2)
    const [miss, register] = exchanges
    // 1. The hash alone (no `query` member).
    expect(miss?.method).toBe('POST')
    expect(miss?.body).not.toHaveProperty('query')
    const { persistedQuery: hash } = (miss?.body?.['extensions'] ?? {}) as {
      persistedQuery: { version: number; sha256Hash: string }
    }
    expect(hash.version).toBe(1)
    // Apollo Client 4 prefers application/graphql-response+json, under which a response
    // without data MUST have a 4xx (GraphQL-over-HTTP §5.4.2): 404, and the client still retries.
    expect(miss?.accept).toMatch(/^application\/graphql-response\+json/)
    expect(miss?.status).toBe(404)
    expect(miss?.code).toBe('PERSISTED_QUERY_NOT_FOUND')
    expect(miss?.cacheControl).toBe('private, no-cache, must-revalidate')
    // 2. The hash and the query: checked, executed, stored.
    expect(typeof register?.body?.['query']).toBe('string')
    expect(register?.status).toBe(200)
    expect(register?.code).toBeUndefined()
    expect(sha256(register?.body?.['query'] as string)).toBe(hash.sha256Hash)
    expect(await store.get(`sha256:${hash.sha256Hash}`)).toBe(register?.body?.['query'])
    // 3. A new client (no memory of the miss) sends the hash only, and it runs.
    const again = client()
    const second = await again.apollo.query({
      query,
      variables: { name: 'again' },
      fetchPolicy: 'no-cache',
    })
    expect(second.data).toEqual({ hello: 'hello again' })
    expect(again.exchanges).toHaveLength(1)
    expect(again.exchanges[0]?.body).not.toHaveProperty('query')
  })

  test('useGETForHashedQueries: the hash over GET, the registration over POST', async () => {
    const { apollo, exchanges } = client({ useGETForHashedQueries: true })
    const query = gql`
      query Items {
        items(first: 2) {
          id
        }
      }
    `
    const result = await apollo.query({ query, fetchPolicy: 'no-cache' })
    expect(result.data).toEqual({
      items: [
        { __typename: 'Item', id: '0' },
        { __typename: 'Item', id: '1' },
      ],
    })
    expect(exchanges.map(({ method, code }) => [method, code])).toEqual([
      ['GET', 'PERSISTED_QUERY_NOT_FOUND'],
      ['POST', undefined],
    ])
    expect(new URL(exchanges[0]?.url ?? '').searchParams.has('extensions')).toBe(true)
    const later = client({ useGETForHashedQueries: true })
    await later.apollo.query({ query, fetchPolicy: 'no-cache' })
    expect(later.exchanges.map(({ method, code }) => [method, code])).toEqual([['GET', undefined]])
  })
})

describe('APQ rules', () => {
  const query = '{ hello }'
  const extensions = (hash: string, version: unknown = 1) => ({
    persistedQuery: { version, sha256Hash: hash },
  })

  test('unknown hash under application/json: HTTP 200, exactly as Apollo Server answers', async () => {
    const hash = sha256('{ never sent }')
    for (const accept of [undefined, 'application/json', '*/*']) {
      const response = await make()(
        new Request(URL_, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) },
          body: JSON.stringify({ extensions: extensions(hash) }),
        }),
      )
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toBe('private, no-cache, must-revalidate')
      expect(await json(response)).toEqual({
        errors: [
          { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
        ],
      })
    }
  })

  test('a hash that is not the sha256 of the query: 400 PERSISTED_QUERY_HASH_MISMATCH, nothing stored', async () => {
    const store = new MemoryPersistedDocumentStore()
    const handler = make({ persistedQueries: { store } })
    const wrong = sha256('{ boom }')
    const response = await handler(post({ query, extensions: extensions(wrong) }))
    expect(response.status).toBe(400)
    expect((await json(response)).errors?.[0]?.extensions.code).toBe(
      'PERSISTED_QUERY_HASH_MISMATCH',
    )
    expect(await store.get(`sha256:${wrong}`)).toBeUndefined()
  })

  test('a document is stored only after it validated', async () => {
    const store = new MemoryPersistedDocumentStore()
    const handler = make({ persistedQueries: { store } })
    const invalid = '{ nope }'
    const response = await handler(
      post({ query: invalid, extensions: extensions(sha256(invalid)) }),
    )
    expect((await json(response)).errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED')
    expect(await store.get(`sha256:${sha256(invalid)}`)).toBeUndefined()
  })

  test('a version other than 1, or a malformed hash: 400 BAD_REQUEST', async () => {
    const handler = make()
    for (const body of [
      { extensions: extensions(sha256(query), 2) },
      { extensions: extensions('ABC') },
      { extensions: { persistedQuery: 'x' } },
      { query, extensions: extensions(sha256(query).toUpperCase()) },
    ]) {
      const response = await handler(post(body))
      expect(response.status).toBe(400)
      expect((await json(response)).errors?.[0]?.extensions.code).toBe('BAD_REQUEST')
    }
  })

  test('persistedQueries: false → PERSISTED_QUERY_NOT_SUPPORTED (Apollo Client then stops hashing)', async () => {
    const handler = make({ persistedQueries: false })
    for (const body of [
      { extensions: extensions(sha256(query)) },
      { documentId: `sha256:${sha256(query)}` },
    ]) {
      const response = await handler(post(body))
      expect(response.status).toBe(200)
      const answer = await json(response)
      expect(answer.errors).toEqual([
        {
          message: 'PersistedQueryNotSupported',
          extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED' },
        },
      ])
    }
    expect(await json(await handler(post({ query })))).toMatchObject({
      data: { hello: 'hello world' },
    })
    // Under application/graphql-response+json a response without data needs a 4xx (§5.4.2).
    const modern = await handler(
      new Request(URL_, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
        },
        body: JSON.stringify({ extensions: extensions(sha256(query)) }),
      }),
    )
    expect(modern.status).toBe(400)
    expect((await json(modern)).errors?.[0]?.extensions.code).toBe('PERSISTED_QUERY_NOT_SUPPORTED')
  })

  test('a store that fails: 500 INTERNAL_SERVER_ERROR, the failure reported, not shown', async () => {
    const reported: unknown[] = []
    const handler = make({
      persistedQueries: {
        store: {
          get: () => Promise.reject(new Error('redis password wrong')),
          set: () => Promise.resolve(),
        },
      },
      onError: (error) => reported.push(error),
    })
    const response = await handler(post({ extensions: extensions(sha256(query)) }))
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(text).toContain('INTERNAL_SERVER_ERROR')
    expect(text).not.toContain('password')
    expect(String(reported[0])).toContain('redis password wrong')
  })
})

describe('documentId (GraphQL-over-HTTP Appendix A)', () => {
  const query = 'query Hello { hello }'
  const id = `sha256:${sha256(query)}`

  test('a registered id runs over POST and GET; an unknown one is PERSISTED_QUERY_NOT_FOUND', async () => {
    const store = new MemoryPersistedDocumentStore()
    await store.set(id, query)
    const handler = make({ persistedQueries: { store } })
    expect(await json(await handler(post({ documentId: id })))).toMatchObject({
      data: { hello: 'hello world' },
    })
    const viaGet = await handler(new Request(`${URL_}?${new URLSearchParams({ documentId: id })}`))
    expect(await json(viaGet)).toMatchObject({ data: { hello: 'hello world' } })
    const unknown = await json(await handler(post({ documentId: `sha256:${sha256('{ boom }')}` })))
    expect(unknown.errors).toHaveLength(1)
    expect(unknown.errors?.[0]?.extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND')
  })

  test('documentId with a query too: 400 BAD_REQUEST', async () => {
    const response = await make()(post({ documentId: id, query }))
    expect(response.status).toBe(400)
    expect((await json(response)).errors?.[0]?.extensions.code).toBe('BAD_REQUEST')
  })

  test('a mutation by documentId over GET is still refused: 405', async () => {
    const mutation = 'mutation { step(label: "x") }'
    const store = new MemoryPersistedDocumentStore()
    await store.set(`sha256:${sha256(mutation)}`, mutation)
    const response = await make({ persistedQueries: { store } })(
      new Request(`${URL_}?${new URLSearchParams({ documentId: `sha256:${sha256(mutation)}` })}`),
    )
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
  })
})

describe('allow-list mode with manifests', () => {
  const hello = 'query Hello { hello }'
  const items = 'query Items { items(first: 1) { id } }'

  async function allowList(manifest: Parameters<typeof loadPersistedManifest>[1]) {
    const store = new MemoryPersistedDocumentStore()
    const count = await loadPersistedManifest(store, manifest)
    return { handler: make({ persistedQueries: { store, mode: 'allow-list' } }), store, count }
  }

  test("Apollo's manifest: registered ids run, by APQ hash and by documentId", async () => {
    const { handler, count } = await allowList({
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [
        { id: sha256(hello), body: hello, name: 'Hello', type: 'query' },
        { id: sha256(items), body: items, name: 'Items', type: 'query' },
      ],
    })
    expect(count).toBe(2)
    const byHash = await handler(
      post({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256(hello) } } }),
    )
    expect(await json(byHash)).toMatchObject({ data: { hello: 'hello world' } })
    const byId = await handler(post({ documentId: `sha256:${sha256(items)}` }))
    expect(await json(byId)).toMatchObject({ data: { items: [{ id: '0' }] } })
  })

  test('a full document, an unknown id, or an APQ registration: PERSISTED_QUERY_ONLY', async () => {
    const { handler, store } = await allowList({ [`sha256:${sha256(hello)}`]: hello })
    const other = '{ boom }'
    for (const body of [
      { query: other },
      { documentId: `sha256:${sha256(other)}` },
      { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(other) } } },
      { query: other, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(other) } } },
    ]) {
      const answer = await json(await handler(post(body)))
      expect(answer.errors).toHaveLength(1)
      expect(answer.errors?.[0]?.extensions.code).toBe('PERSISTED_QUERY_ONLY')
    }
    expect(await store.get(`sha256:${sha256(other)}`)).toBeUndefined()
  })

  test('a plain map (Relay, GraphQL Code Generator) with custom and bare-hex ids', async () => {
    const { handler } = await allowList({ 'relay-md5-1': hello, [sha256(items)]: items })
    expect(await json(await handler(post({ documentId: 'relay-md5-1' })))).toMatchObject({
      data: { hello: 'hello world' },
    })
    // A bare hex id is stored as sha256:<hex>, so APQ hashes find it.
    const byHash = await handler(
      post({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256(items) } } }),
    )
    expect(await json(byHash)).toMatchObject({ data: { items: [{ id: '0' }] } })
  })

  test('a manifest whose sha256 id is not its body is refused before anything is stored', async () => {
    const store = new MemoryPersistedDocumentStore()
    await expect(
      loadPersistedManifest(store, {
        [`sha256:${sha256(hello)}`]: hello,
        [`sha256:${sha256(hello)}0`.slice(0, 71)]: items,
      }),
    ).rejects.toThrow(TypeError)
    await expect(
      loadPersistedManifest(store, {
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [{ id: sha256(hello), body: items }],
      }),
    ).rejects.toThrow(/not the sha256/)
    expect(await store.get(`sha256:${sha256(hello)}`)).toBeUndefined()
    for (const bad of [
      null,
      [],
      { format: 'other' },
      { a: 1 },
      { format: 'apollo-persisted-query-manifest', version: 1, operations: [{}] },
    ]) {
      await expect(loadPersistedManifest(store, bad as never)).rejects.toThrow(TypeError)
    }
  })
})
