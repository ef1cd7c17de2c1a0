// With REDIS_URL / DATABASE_URL set, several copies of the service run side by side and behave
// as one (docs/service.md, "Several instances"; docs/stores.md, "Several instances of a
// service"): two instances on two ports, one client, driven alternately.
import type { CursorKey } from '@api-blocks/pagination'
import type { RateLimitPolicy } from '@api-blocks/rate-limit'
import { afterAll, describe, expect, test } from 'vitest'
import type { StoreEnvironment } from '../src/stores.ts'
import { apiFetch } from './oauth-client.ts'
import { serveOnStores } from './serve-on-stores.ts'

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

interface InstanceOptions {
  cursorKeys?: readonly CursorKey[]
  rateLimits?: readonly RateLimitPolicy[]
  publicUrl?: string
}

async function instance(env: StoreEnvironment, options: InstanceOptions = {}): Promise<string> {
  const running = await serveOnStores(env, { service: options })
  cleanups.push(running.close)
  return running.base
}

const order = JSON.stringify({
  customer: 'Ada Lovelace',
  items: [{ sku: 'BOOK-042', quantity: 2 }],
})
const post = (base: string, key: string, body = order) =>
  apiFetch(`${base}/v1/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body,
  })

async function sharesRecords(env: StoreEnvironment, sharesOrders: boolean): Promise<void> {
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
  // Instance b created nothing; with orders in PostgreSQL it lists a's order, else nothing.
  const listed = (await (await apiFetch(`${b}/v1/orders`)).json()).data
  expect(listed).toEqual(sharesOrders ? [JSON.parse(firstBody)] : [])
}

const redisUrl = process.env['REDIS_URL']
const databaseUrl = process.env['DATABASE_URL']

describe.skipIf(!redisUrl)(
  `two instances share idempotency records in Redis${redisUrl ? '' : ' (skipped: REDIS_URL not set)'}`,
  () => {
    test('a key used on one instance replays on the other', async () => {
      await sharesRecords(
        { REDIS_URL: redisUrl, REDIS_PREFIX: `test:${crypto.randomUUID()}:` },
        false,
      )
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
      await sharesRecords({ DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema }, true)
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

/** A schema of this file's own on the server, dropped afterwards. */
async function testSchema(): Promise<{ schema: string; admin: import('pg').Pool }> {
  const schema = `service_i13_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const pg = (await import('pg')).default
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 2 })
  cleanups.push(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
  })
  return { schema, admin }
}

const key = (id: string, fill: number): CursorKey => ({
  id,
  secret: new Uint8Array(32).fill(fill),
})
const PUBLIC = 'https://api.example'
const many: RateLimitPolicy[] = [{ name: 'tests', quota: 100_000, windowSeconds: 1 }]
const json = { 'content-type': 'application/json' }
/** The path of an absolute URL on PUBLIC, to send to an instance. */
const pathOf = (url: string | null) => {
  expect(url?.startsWith(`${PUBLIC}/`)).toBe(true)
  return (url ?? '').slice(PUBLIC.length)
}

describe.skipIf(!redisUrl || !databaseUrl)(
  `two instances on one PostgreSQL and one Redis behave as one${redisUrl && databaseUrl ? '' : ' (skipped: REDIS_URL and DATABASE_URL needed)'}`,
  () => {
    // A schema and a Redis prefix of each test's own; the pool reads and sets up the schema.
    const environment = async () => {
      const { schema, admin } = await testSchema()
      const env = {
        DATABASE_URL: databaseUrl,
        DATABASE_SCHEMA: schema,
        REDIS_URL: redisUrl,
        REDIS_PREFIX: `test:i13:${crypto.randomUUID()}:`,
      } satisfies StoreEnvironment
      return Object.assign(env, { admin })
    }

    test('replays, Locations, cursors and conditional writes work across instances, driven alternately', async () => {
      const env = await environment()
      const options = { cursorKeys: [key('k1', 1)], rateLimits: many, publicUrl: PUBLIC }
      const [a, b] = [await instance(env, options), await instance(env, options)]
      const at = (index: number) => (index % 2 === 0 ? a : b)

      // Creates, alternately; a replay of each on the other instance answers the same bytes.
      const created: { id: string; location: string; etag: string }[] = []
      for (let i = 0; i < 6; i += 1) {
        const idempotencyKey = `create-${crypto.randomUUID()}`
        const body = JSON.stringify({
          customer: `Customer ${i}`,
          items: [{ sku: 'B-1', quantity: 1 }],
        })
        const first = await post(at(i), idempotencyKey, body)
        expect(first.status).toBe(201)
        const text = await first.text()
        const replay = await post(at(i + 1), idempotencyKey, body)
        expect(replay.status).toBe(201)
        expect(replay.headers.get('idempotent-replayed')).toBe('true')
        expect(await replay.text()).toBe(text)
        const location = first.headers.get('location') ?? ''
        expect(replay.headers.get('location')).toBe(location)
        created.push({ id: JSON.parse(text).id, location, etag: first.headers.get('etag') ?? '' })
      }
      // Ids are globally unique; a Location from one instance names the same order on the other.
      expect(new Set(created.map((order) => order.id)).size).toBe(6)
      for (const [index, order] of created.entries()) {
        expect(order.location).toBe(`${PUBLIC}/v1/orders/${order.id}`)
        const read = await apiFetch(`${at(index + 1)}${pathOf(order.location)}`)
        expect(read.status).toBe(200)
        expect((await read.json()).id).toBe(order.id)
      }

      // Pages: a cursor (and the Link) from one instance works on the other.
      const all = (await (await apiFetch(`${a}/v1/orders?limit=100`)).json()).data.map(
        (order: { id: string }) => order.id,
      )
      expect([...all].sort()).toEqual(created.map((order) => order.id).sort())
      const seen: string[] = []
      let path = '/v1/orders?limit=2'
      for (let pages = 0; pages < 10; pages += 1) {
        const response = await apiFetch(`${at(pages)}${path}`)
        expect(response.status).toBe(200)
        const body = await response.json()
        seen.push(...body.data.map((order: { id: string }) => order.id))
        if (!body.has_more) break
        path = pathOf(
          /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1] ?? null,
        )
        expect(path).toBe(`/v1/orders?limit=2&after=${body.next_cursor}`)
      }
      expect(seen).toEqual(all)

      // Conditional writes: If-Match with the ETag read on a, sent to b; then the stale one → 412.
      const target = created[0]!
      const read = await apiFetch(`${a}${pathOf(target.location)}`)
      const etag = read.headers.get('etag') ?? ''
      const patch = (base: string, tag: string, note: string) =>
        apiFetch(`${base}${pathOf(target.location)}`, {
          method: 'PATCH',
          headers: { ...json, 'if-match': tag },
          body: JSON.stringify({ note }),
        })
      const fresh = await patch(b, etag, 'from b')
      expect(fresh.status).toBe(200)
      const stale = await patch(a, etag, 'from a')
      expect(stale.status).toBe(412)
      expect((await (await apiFetch(`${a}${pathOf(target.location)}`)).json()).note).toBe('from b')

      // The 202 of the cancel action on a; its status monitor polled on b.
      const accepted = await apiFetch(`${a}${pathOf(target.location)}/cancel`, { method: 'POST' })
      expect(accepted.status).toBe(202)
      const monitor = pathOf(accepted.headers.get('location'))
      let operation = await (await apiFetch(`${b}${monitor}`)).json()
      expect(operation).toMatchObject({ kind: 'order.cancel', target: pathOf(target.location) })
      for (let polls = 0; operation.status === 'running' && polls < 100; polls += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        operation = await (await apiFetch(`${b}${monitor}`)).json()
      }
      expect(operation.status).toBe('succeeded')
      expect((await (await apiFetch(`${b}${pathOf(target.location)}`)).json()).status).toBe(
        'cancelled',
      )
    })

    test('cursor keys rotate: a cursor signed by the old key works on an instance that has the new one first', async () => {
      const env = await environment()
      const old = await instance(env, { cursorKeys: [key('k1', 1)], rateLimits: many })
      const rotated = await instance(env, {
        cursorKeys: [key('k2', 2), key('k1', 1)],
        rateLimits: many,
      })
      const stranger = await instance(env, { cursorKeys: [key('k3', 3)], rateLimits: many })
      for (let i = 0; i < 3; i += 1)
        expect((await post(old, `r-${crypto.randomUUID()}`)).status).toBe(201)
      const { next_cursor: cursor } = await (await apiFetch(`${old}/v1/orders?limit=1`)).json()
      expect(cursor).toMatch(/^v1\.k1\./)
      const next = await apiFetch(`${rotated}/v1/orders?limit=1&after=${cursor}`)
      expect(next.status).toBe(200)
      // The rotated instance signs with its newest key.
      expect((await next.json()).next_cursor).toMatch(/^v1\.k2\./)
      // An instance without the key refuses the cursor: 400 invalid-cursor.
      const refused = await apiFetch(`${stranger}/v1/orders?limit=1&after=${cursor}`)
      expect(refused.status).toBe(400)
      expect((await refused.json()).type).toMatch(/invalid-cursor$/)
    })

    test('rate limits agree across instances: one quota, whichever instance answers', async () => {
      const env = await environment()
      const options = { rateLimits: [{ name: 'shared', quota: 3, windowSeconds: 60 }] }
      const [a, b] = [await instance(env, options), await instance(env, options)]
      const statuses: number[] = []
      const remaining: (string | null)[] = []
      for (const base of [a, b, a, b, a]) {
        const response = await apiFetch(`${base}/v1/orders`)
        statuses.push(response.status)
        remaining.push(response.headers.get('ratelimit-remaining'))
        await response.arrayBuffer()
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429])
      expect(remaining).toEqual(['2', '1', '0', '0', '0'])
    })

    test('MUST NOT execute twice: a failure after the insert commits neither the order nor the record', async () => {
      const env = await environment()
      const { admin, DATABASE_SCHEMA: schema } = env
      const [a, b] = [
        await instance(env, { rateLimits: many }),
        await instance(env, { rateLimits: many }),
      ]
      // Two failures, once each, both after the INSERT of the order (sequences, not tables, count
      // them: nextval survives a rollback):
      // - the UPDATE that completes the Idempotency-Key record fails (as a crash between the
      //   insert and the completion would leave it: had the insert committed on its own, the
      //   retry would create a second order);
      // - the COMMIT fails (a deferred trigger), after both statements ran.
      await admin.query(`CREATE SEQUENCE ${schema}.completions;
CREATE SEQUENCE ${schema}.commits;
CREATE FUNCTION ${schema}.fail_completion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state = 'completed' AND nextval('${schema}.completions') = 1 THEN
    RAISE EXCEPTION 'simulated failure of the completion';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER fail_completion BEFORE UPDATE ON ${schema}.api_blocks_idempotency_records
  FOR EACH ROW EXECUTE FUNCTION ${schema}.fail_completion();
CREATE FUNCTION ${schema}.fail_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.customer = 'Commit Fails' AND nextval('${schema}.commits') = 1 THEN
    RAISE EXCEPTION 'simulated failure at commit';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER fail_commit AFTER INSERT ON ${schema}.orders
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${schema}.fail_commit();`)
      const count = async (customer: string) =>
        Number(
          (
            await admin.query(`SELECT count(*) AS n FROM ${schema}.orders WHERE customer = $1`, [
              customer,
            ])
          ).rows[0].n,
        )
      for (const customer of ['Completion Fails', 'Commit Fails']) {
        const body = JSON.stringify({ customer, items: [{ sku: 'B-1', quantity: 1 }] })
        const idempotencyKey = `crash-${crypto.randomUUID()}`
        const failed = await post(a, idempotencyKey, body)
        expect(failed.status, customer).toBe(503)
        await failed.body?.cancel()
        expect(await count(customer), customer).toBe(0) // the order rolled back with the record
        // The retry (on the other instance) executes, once; a second retry replays it.
        const retry = await post(b, idempotencyKey, body)
        expect(retry.status, customer).toBe(201)
        expect(retry.headers.get('idempotent-replayed')).toBeNull()
        const text = await retry.text()
        expect(await count(customer)).toBe(1)
        const replay = await post(a, idempotencyKey, body)
        expect(replay.headers.get('idempotent-replayed')).toBe('true')
        expect(await replay.text()).toBe(text)
        expect(await count(customer)).toBe(1)
      }
    })
  },
)
