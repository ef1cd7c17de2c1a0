// Two instances of the running service (src/main.ts, each in a process of its own) on one Redis
// (and PostgreSQL, when DATABASE_URL is set): a subscriber on one instance gets the writes
// taken by the other (RedisPubSub), and a document registered by APQ on one runs by its hash
// alone on the other (the persisted-document store they share).
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { encodeBase64url } from '@api-blocks/core'
import type { ExecutionResult } from 'graphql'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Changes } from './graphql-kit.ts'
import {
  graphqlCreate,
  live,
  ORDER_CHANGED,
  restCreate,
  sseClient,
  until,
  wsClient,
} from './graphql-kit.ts'
import { clientCredentialsToken } from './oauth-client.ts'
import type { ServiceProcess } from './running-service.ts'
import { startService } from './running-service.ts'

const redisUrl = process.env['REDIS_URL']
const databaseUrl = process.env['DATABASE_URL']
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/** The environment both instances share: the stores, and the OAuth keys (as in production). */
function sharedEnvironment(withDatabase: boolean): Record<string, string> {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    format: 'jwk',
  })
  const env: Record<string, string> = {
    REDIS_URL: redisUrl as string,
    REDIS_PREFIX: `test:i16:${crypto.randomUUID()}:`,
    OAUTH_TOKEN_KEY: encodeBase64url(new Uint8Array(randomBytes(32))),
    OAUTH_SIGNING_KEYS: JSON.stringify([{ kid: 'shared-1', alg: 'ES256', ...jwk }]),
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_PER_HOUR: '1000000',
  }
  if (withDatabase) {
    const schema = `graphql_two_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    env['DATABASE_URL'] = databaseUrl as string
    env['DATABASE_SCHEMA'] = schema
    cleanups.push(async () => {
      const admin = new pg.Client({ connectionString: databaseUrl })
      await admin.connect()
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    })
  }
  return env
}

async function twoInstances(
  withDatabase: boolean,
): Promise<{ a: ServiceProcess; b: ServiceProcess; authorization: string }> {
  const env = sharedEnvironment(withDatabase)
  const a = await startService(env)
  cleanups.push(a.stop)
  // Behind one public URL in production: the issuer of both is a's address.
  const b = await startService({ ...env, PUBLIC_URL: a.base })
  cleanups.push(b.stop)
  const token = await clientCredentialsToken(fetch, a.base, 'read:orders write:orders')
  return { a, b, authorization: `Bearer ${token}` }
}

const runs = [
  { name: 'Redis', withDatabase: false, skip: redisUrl ? undefined : 'REDIS_URL not set' },
  {
    name: 'PostgreSQL orders, Redis pub/sub',
    withDatabase: true,
    skip: !redisUrl ? 'REDIS_URL not set' : !databaseUrl ? 'DATABASE_URL not set' : undefined,
  },
]

for (const run of runs) {
  describe.skipIf(run.skip !== undefined)(
    `/graphql on two instances: ${run.name}${run.skip ? ` (skipped: ${run.skip})` : ''}`,
    () => {
      // One pair for both tests: each start migrates and opens its stores.
      let pair: Awaited<ReturnType<typeof twoInstances>>
      beforeAll(async () => {
        pair = await twoInstances(run.withDatabase)
      }, 60_000)

      test('a subscriber on one instance gets the writes of the other, over WebSocket and server-sent events', async () => {
        const { a, b, authorization } = pair
        const ws = wsClient(b.base, { authorization })
        const sse = sseClient(a.base, { authorization })
        try {
          const onB = ws.iterate({ query: ORDER_CHANGED }) as Changes
          const onA = sse.iterate({ query: ORDER_CHANGED }) as Changes
          // Primed by writes on the other instance: once they arrive, the Redis subscription
          // of that instance is in place.
          await live(onB, () => restCreate(a.base, authorization, 'priming'))
          await live(onA, () => restCreate(b.base, authorization, 'priming'))
          const rest = await restCreate(a.base, authorization, 'Ada Lovelace')
          expect(await until(onB, rest.id)).toMatchObject({ customer: 'Ada Lovelace', version: 1 })
          expect(await until(onA, rest.id)).toMatchObject({ customer: 'Ada Lovelace' })
          const mutation = await graphqlCreate(b.base, authorization, 'Grace Hopper')
          expect(await until(onA, mutation.id)).toMatchObject({ customer: 'Grace Hopper' })
          expect(await until(onB, mutation.id)).toMatchObject({ customer: 'Grace Hopper' })
          await onA.return?.()
          await onB.return?.()
        } finally {
          await ws.dispose()
          sse.dispose()
        }
      })

      test('an Idempotency-Key on createOrder replays on the other instance: one order', async () => {
        const { a, b, authorization } = pair
        const key = `gql-${crypto.randomUUID()}`
        const body = JSON.stringify({
          query:
            'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id customer } }',
          variables: { input: { customer: key, items: [{ sku: 'BOOK-042', quantity: 1 }] } },
        })
        const send = (base: string) =>
          fetch(`${base}/graphql`, {
            method: 'POST',
            headers: {
              authorization,
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            body,
          })
        const first = await send(a.base)
        const created = (await first.json()) as ExecutionResult<{ createOrder: { id: string } }>
        expect(created.errors).toBeUndefined()
        const replay = await send(b.base)
        expect(replay.headers.get('idempotent-replayed')).toBe('true')
        expect(await replay.json()).toEqual(created)
        // One order with that customer, on the instance that took it (on Redis alone each
        // instance keeps its orders in memory), every page read.
        const ids: string[] = []
        let after: string | null = null
        do {
          const list = await fetch(`${a.base}/graphql`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify({
              query:
                'query ($after: String) { orders(first: 100, after: $after) { edges { node { id customer } } pageInfo { hasNextPage endCursor } } }',
              variables: { after },
            }),
          })
          const page = (await list.json()) as ExecutionResult<{
            orders: {
              edges: { node: { id: string; customer: string } }[]
              pageInfo: { hasNextPage: boolean; endCursor: string | null }
            }
          }>
          const orders = page.data?.orders
          for (const edge of orders?.edges ?? []) {
            if (edge.node.customer === key) ids.push(edge.node.id)
          }
          after = orders?.pageInfo.hasNextPage ? orders.pageInfo.endCursor : null
        } while (after !== null)
        expect(ids).toEqual([created.data?.createOrder.id])
      })

      test('a document registered by APQ on one instance runs by its hash alone on the other', async () => {
        const { a, b, authorization } = pair
        const query = '{ viewer { clientId } }'
        const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(query))
        const sha256Hash = Buffer.from(digest).toString('hex')
        const extensions = { persistedQuery: { version: 1, sha256Hash } }
        const send = async (base: string, body: unknown) => {
          const response = await fetch(`${base}/graphql`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
          return (await response.json()) as ExecutionResult
        }
        const unknown = await send(b.base, { extensions })
        expect(unknown.errors?.[0]?.extensions?.['code']).toBe('PERSISTED_QUERY_NOT_FOUND')
        expect((await send(a.base, { query, extensions })).data).toEqual({
          viewer: { clientId: 'demo-backend' },
        })
        expect(await send(b.base, { extensions })).toMatchObject({
          data: { viewer: { clientId: 'demo-backend' } },
        })
      })
    },
  )
}
