// With REDIS_URL / DATABASE_URL set, several copies of the service run side by side and share
// their idempotency records (docs/stores.md, "Several instances of a service"). Two instances on two ports, one client, one key.
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { serve } from '@api-blocks/node'
import { afterAll, describe, expect, test } from 'vitest'
import { createService } from '../src/app.ts'
import type { StoreEnvironment } from '../src/stores.ts'
import { openStores } from '../src/stores.ts'

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

async function instance(env: StoreEnvironment): Promise<string> {
  const stores = await openStores(env)
  const server = serve(
    createService({
      ...(stores.idempotencyStore ? { idempotencyStore: stores.idempotencyStore } : {}),
      ...(stores.rateLimitStore ? { rateLimitStore: stores.rateLimitStore } : {}),
    }),
    // As src/main.ts serves it.
    { port: 0, hostname: '127.0.0.1', lightweight: true },
  )
  await once(server, 'listening')
  cleanups.push(async () => {
    await new Promise((resolve) => server.close(resolve))
    await stores.close()
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const order = JSON.stringify({
  customer: 'Ada Lovelace',
  items: [{ sku: 'BOOK-042', quantity: 2 }],
})
const post = (base: string, key: string, body = order) =>
  fetch(`${base}/v1/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body,
  })

async function sharesRecords(env: StoreEnvironment): Promise<void> {
  const [a, b] = [await instance(env), await instance(env)]
  expect(a).not.toBe(b)
  const key = `shared-${crypto.randomUUID()}`
  const first = await post(a, key)
  expect(first.status).toBe(201)
  const firstBody = await first.text()
  // The other instance has never seen the order, yet answers the stored result.
  const replay = await post(b, key)
  expect(replay.status).toBe(201)
  expect(replay.headers.get('idempotent-replayed')).toBe('true')
  expect(await replay.text()).toBe(firstBody)
  const mismatch = await post(
    b,
    key,
    JSON.stringify({ customer: 'Grace', items: [{ sku: 'X', quantity: 1 }] }),
  )
  expect(mismatch.status).toBe(409)
  await mismatch.body?.cancel()
  // Instance b created nothing: its own list is empty.
  expect((await (await fetch(`${b}/v1/orders`)).json()).data).toEqual([])
}

const redisUrl = process.env['REDIS_URL']
const databaseUrl = process.env['DATABASE_URL']

describe.skipIf(!redisUrl)(
  `two instances share idempotency records in Redis${redisUrl ? '' : ' (skipped: REDIS_URL not set)'}`,
  () => {
    test('a key used on one instance replays on the other', async () => {
      await sharesRecords({ REDIS_URL: redisUrl, REDIS_PREFIX: `test:${crypto.randomUUID()}:` })
    })
  },
)

describe.skipIf(!databaseUrl)(
  `two instances share idempotency records in PostgreSQL${databaseUrl ? '' : ' (skipped: DATABASE_URL not set)'}`,
  () => {
    test('a key used on one instance replays on the other', async () => {
      const schema = `service_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
      const pg = (await import('pg')).default
      const admin = new pg.Pool({ connectionString: databaseUrl })
      cleanups.push(async () => {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        await admin.end()
      })
      await sharesRecords({ DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema })
    })
  },
)

test('without REDIS_URL or DATABASE_URL, each instance keeps its own records', async () => {
  const [a, b] = [await instance({}), await instance({})]
  const key = `local-${crypto.randomUUID()}`
  expect((await post(a, key)).status).toBe(201)
  const second = await post(b, key)
  expect(second.status).toBe(201)
  expect(second.headers.get('idempotent-replayed')).toBeNull()
})
