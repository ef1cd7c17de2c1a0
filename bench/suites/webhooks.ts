// Issue 15: deliveries per second to a loopback receiver, signing included: @api-blocks/webhooks'
// worker and sender over MemoryDeliveryQueue, and over PostgresDeliveryQueue when DATABASE_URL is
// set, against bare undici POSTs to the same receiver with the same keep-alive pool size and
// concurrency. Targets: ours at least 0.7x the bare POSTs (memory queue), and at least 1,000
// deliveries per second on the PostgreSQL queue.
//
// The receiver (bench/webhook-receiver.ts) is a bare node:http server in a child process pinned
// to CPU 0 that reads each body and answers 200; this process, the sender side, is pinned to
// CPU 1. Every delivery is one event of about 250 bytes of JSON to one endpoint.
//
// - bare: one undici Pool of CONCURRENCY keep-alive connections, CONCURRENCY loops each POSTing
//   the next payload with Content-Type, a User-Agent and the three webhook-* fields, and reading
//   the (empty) answer. "bare, unsigned" sends a fixed signature field of the right length (the
//   least work there is); "bare, signed" computes it per request with node:crypto createHmac and
//   a KeyObject, as a hand-written sender would.
// - ours: an endpoint registry (memory, or PostgresEndpointStore beside the PostgreSQL queue), the
//   publisher, and a worker with `concurrency` and `perEndpoint` both CONCURRENCY (or
//   PG_CONCURRENCY in the last row) and a batch of twice that, sending through
//   createWebhookSender and the SSRF guard's dispatcher (the receiver's origin allowed). Fed two
//   ways: a backlog (every event published first, untimed, then drained) and a steady feed (one
//   event published per delivery settled, at most WINDOW queued, publishing timed too). Timed
//   from `start()` to the last settle. Every delivery must end `succeeded` and the receiver's
//   count must grow by exactly the number sent, or the run stops.
//
// ROUNDS rounds, the order of the columns alternating; each column reports the median
// deliveries per second (wall time), this process's CPU time per delivery, and the median of the
// per-round ratios to "bare, unsigned". On PostgreSQL every run gets fresh tables in a schema of
// its own, dropped at the end.
import { createHmac, createSecretKey } from 'node:crypto'
import { migrate, PostgresDeliveryQueue, PostgresEndpointStore } from '@api-blocks/postgres'
import type { DeliveryQueue, EndpointStore } from '@api-blocks/webhooks'
import {
  createDeliveryWorker,
  createEndpointRegistry,
  createEvent,
  createSsrfGuard,
  createWebhookPublisher,
  createWebhookSender,
  MemoryDeliveryQueue,
  MemoryEndpointStore,
} from '@api-blocks/webhooks'
import pg from 'pg'
import { Pool } from 'undici'
import { median, pinClient, startNode } from '../service-process.ts'

const CONCURRENCY = 16
const DELIVERIES = Number(process.env['WEBHOOKS_BENCH_DELIVERIES'] ?? 5_000)
const ROUNDS = Number(process.env['WEBHOOKS_BENCH_ROUNDS'] ?? 5)
const USER_AGENT = 'api-blocks-webhooks/1 (+https://github.com/api-blocks/api-blocks)'

interface Run {
  perSecond: number
  cpuUs: number
}

const cpu = () => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

/** The order of the index-th event: about 300 bytes of JSON in its envelope. */
function orderOf(index: number) {
  return {
    id: `ord_${index}`,
    status: 'paid',
    customer: 'Ada Lovelace',
    items: [{ sku: 'BOOK-042', quantity: 2, price: 2100 }],
    total: 4200,
    currency: 'EUR',
  }
}

async function received(url: string): Promise<number> {
  const response = await fetch(url)
  return Number(await response.text())
}

async function bare(url: string, secret: string, signed: boolean): Promise<Run> {
  const target = new URL(url)
  const pool = new Pool(target.origin, { connections: CONCURRENCY, pipelining: 1 })
  const key = createSecretKey(Buffer.from(secret.slice('whsec_'.length), 'base64'))
  const events = Array.from({ length: DELIVERIES }, (_, index) => {
    const event = createEvent({ type: 'order.updated', object: orderOf(index) })
    return { id: event.id, payload: JSON.stringify(event) }
  })
  const fixed = `v1,${'A'.repeat(43)}=`
  let next = 0
  const before = cpu()
  const started = performance.now()
  const loop = async () => {
    while (next < events.length) {
      const { id, payload } = events[next] as { id: string; payload: string }
      next += 1
      const timestamp = String(Math.floor(Date.now() / 1000))
      const signature = signed
        ? `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(payload).digest('base64')}`
        : fixed
      const { statusCode, body } = await pool.request({
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': id,
          'webhook-timestamp': timestamp,
          'webhook-signature': signature,
        },
        body: payload,
      })
      await body.dump()
      if (statusCode !== 200) throw new Error(`bare POST answered ${statusCode}`)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, loop))
  const seconds = (performance.now() - started) / 1000
  const cpuUs = (cpu() - before) / DELIVERIES
  await pool.close()
  return { perSecond: DELIVERIES / seconds, cpuUs }
}

/** A fresh memory queue and endpoint store. */
function memory(): { queue: DeliveryQueue; store: EndpointStore } {
  return { queue: new MemoryDeliveryQueue(), store: new MemoryEndpointStore() }
}

/** The bench's own schema, dropped at the end; each run gets fresh tables in it. */
const SCHEMA = `bench_webhooks_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
/** Connections of the PostgreSQL pool: the worker's claims and settles, and the publisher's enqueues. */
const POOL_SIZE = Number(process.env['WEBHOOKS_BENCH_PG_POOL'] ?? 16)
/** Attempts in flight in the last PostgreSQL row: every commit waits for a WAL flush, so more in flight means more commits per flush. */
const PG_CONCURRENCY = Number(process.env['WEBHOOKS_BENCH_PG_CONCURRENCY'] ?? 64)
let tables = 0

/** A fresh PostgreSQL queue and endpoint store: new tables (migration 0004) in the bench's schema. */
async function postgres(pool: pg.Pool): Promise<{ queue: DeliveryQueue; store: EndpointStore }> {
  const options = { schema: SCHEMA, tablePrefix: `run${tables++}_` }
  await migrate(pool, options)
  return {
    queue: new PostgresDeliveryQueue({ db: pool, ...options }),
    store: new PostgresEndpointStore({ db: pool, ...options }),
  }
}

/**
 * How ours is fed: `backlog` publishes every event first (untimed; a burst, the worker then
 * drains a queue of DELIVERIES), `steady` publishes as it delivers (timed, publishing included),
 * keeping at most WINDOW deliveries queued ahead of the worker (a service producing events at
 * the rate they are delivered).
 */
type Feed = 'backlog' | 'steady'
const WINDOW = 4 * CONCURRENCY

/** Delivers DELIVERIES events to one endpoint through `queue` with a worker and the sender. */
async function ours(
  url: string,
  { queue, store }: { queue: DeliveryQueue; store: EndpointStore },
  feed: Feed,
  concurrency: number,
  onPublished: (perSecond: number) => void = () => {},
): Promise<Run> {
  const origin = new URL(url).origin
  const guard = createSsrfGuard({ allowedOrigins: [origin] })
  const registry = createEndpointRegistry({ store, guard })
  await registry.create({ url })
  const publisher = createWebhookPublisher({ registry, queue })
  const sender = createWebhookSender({ guard })
  let published = 0
  const publish = async () => {
    const index = published
    published += 1
    await publisher.publish(createEvent({ type: 'order.updated', object: orderOf(index) }))
  }
  if (feed === 'backlog') {
    const publishStarted = performance.now()
    while (published < DELIVERIES) await publish()
    onPublished(DELIVERIES / ((performance.now() - publishStarted) / 1000))
  }
  let settled = 0
  let failures = 0
  let done: () => void = () => {}
  const finished = new Promise<void>((resolve) => {
    done = resolve
  })
  // Steady feed: one event published for each one settled (concurrently, as request handlers
  // of a service would), the worker woken for it.
  const feeding: Promise<void>[] = []
  let requested = Math.min(WINDOW, DELIVERIES)
  const worker = createDeliveryWorker({
    queue,
    registry,
    sender,
    concurrency,
    perEndpoint: concurrency,
    batchSize: 2 * concurrency,
    onEvent: (event) => {
      if (event.type === 'error') failures += 1
      if (event.type !== 'attempt') return
      if (!event.settled || event.resolution.status !== 'succeeded') failures += 1
      settled += 1
      if (settled === DELIVERIES) done()
      if (feed === 'steady' && requested < DELIVERIES) {
        requested += 1
        feeding.push(publish().then(() => worker.wake()))
      }
    },
  })
  const before = cpu()
  const started = performance.now()
  if (feed === 'steady') {
    while (published < Math.min(WINDOW, DELIVERIES)) await publish()
  }
  worker.start()
  await finished
  await Promise.all(feeding)
  const seconds = (performance.now() - started) / 1000
  const cpuUs = (cpu() - before) / DELIVERIES
  await worker.stop()
  await sender.close()
  await guard.close()
  if (failures > 0) throw new Error(`${failures} deliveries did not succeed`)
  return { perSecond: DELIVERIES / seconds, cpuUs }
}

export default async function run(): Promise<void> {
  const receiver = await startNode([new URL('../webhook-receiver.ts', import.meta.url).pathname])
  pinClient()
  const url = `${receiver.url}/hooks`
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
  const database = process.env['DATABASE_URL']
  const pool =
    database === undefined || database === ''
      ? undefined
      : new pg.Pool({
          connectionString: database,
          max: POOL_SIZE,
          statement_timeout: 10_000,
          // WEBHOOKS_BENCH_PG_OPTIONS='-c synchronous_commit=off' shows what the WAL flush of
          // every commit costs (a setting to weigh, not a default: a lost enqueue is a lost event).
          ...(process.env['WEBHOOKS_BENCH_PG_OPTIONS']
            ? { options: process.env['WEBHOOKS_BENCH_PG_OPTIONS'] }
            : {}),
        })
  try {
    const columns = {
      'bare, unsigned': () => bare(url, secret, false),
      'bare, signed': () => bare(url, secret, true),
      [`ours, memory queue, backlog of ${DELIVERIES}`]: () =>
        ours(url, memory(), 'backlog', CONCURRENCY, (rate) => publishRates.push(rate)),
      [`ours, memory queue, steady (at most ${WINDOW} queued)`]: () =>
        ours(url, memory(), 'steady', CONCURRENCY),
    } as Record<string, () => Promise<Run>>
    if (pool !== undefined) {
      columns[`ours, PostgreSQL queue, backlog of ${DELIVERIES}`] = async () =>
        ours(url, await postgres(pool), 'backlog', CONCURRENCY)
      columns[`ours, PostgreSQL queue, steady (at most ${WINDOW} queued)`] = async () =>
        ours(url, await postgres(pool), 'steady', CONCURRENCY)
      columns[`ours, PostgreSQL queue, backlog of ${DELIVERIES}, ${PG_CONCURRENCY} in flight`] =
        async () => ours(url, await postgres(pool), 'backlog', PG_CONCURRENCY)
    } else {
      console.log('DATABASE_URL is not set: no PostgreSQL rows')
    }
    const names = Object.keys(columns)
    const runs: Record<string, Run[]> = Object.fromEntries(names.map((name) => [name, []]))
    const ratios: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]))
    const publishRates: number[] = []
    // A warm-up of each, untimed.
    for (const name of names) await (columns[name] as () => Promise<Run>)()
    publishRates.length = 0
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? names : [...names].reverse()
      const result: Record<string, Run> = {}
      for (const name of order) {
        const before = await received(url)
        const outcome = await (columns[name] as () => Promise<Run>)()
        const arrived = (await received(url)) - before
        if (arrived !== DELIVERIES) throw new Error(`${name}: ${arrived} of ${DELIVERIES} arrived`)
        result[name] = outcome
        runs[name]?.push(outcome)
      }
      const base = result['bare, unsigned'] as Run
      for (const name of names) ratios[name]?.push((result[name] as Run).perSecond / base.perSecond)
    }
    const event = createEvent({ type: 'order.updated', object: orderOf(0) })
    console.log(
      `${DELIVERIES} deliveries of one ${JSON.stringify(event).length}-byte event each to a loopback node:http receiver, ${CONCURRENCY} keep-alive connections and ${CONCURRENCY} in flight, ${ROUNDS} rounds, medians`,
    )
    console.log(
      '| sender | deliveries/s | sender CPU µs per delivery | deliveries/s, / bare unsigned (by round) |',
    )
    console.log('|---|---:|---:|---:|')
    for (const name of names) {
      const own = runs[name] as Run[]
      const byRound = ratios[name] as number[]
      console.log(
        `| ${name} | ${Math.round(median(own.map((r) => r.perSecond)))} | ${median(own.map((r) => r.cpuUs)).toFixed(1)} | ${median(byRound).toFixed(2)} (${byRound.map((r) => r.toFixed(2)).join(', ')}) |`,
      )
    }
    console.log(
      `publishing before the backlog runs (not in their rates): ${Math.round(median(publishRates))} events/s into the memory queue`,
    )
    console.log(
      '(targets: ours / bare unsigned >= 0.7 on the memory queue; >= 1,000 deliveries/s on PostgreSQL)',
    )
  } finally {
    receiver.stop()
    if (pool !== undefined) {
      await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`)
      await pool.end()
    }
  }
}
