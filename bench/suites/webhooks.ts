// Issue 15: deliveries per second to a loopback receiver, signing included: @api-blocks/webhooks'
// worker and sender (over MemoryDeliveryQueue, and over PostgresDeliveryQueue when DATABASE_URL
// is set) against bare undici POSTs to the same receiver with the same keep-alive pool size and
// concurrency. Targets: ours at least 0.7x the bare POSTs (memory queue), and at least 1,000
// deliveries per second on the PostgreSQL queue.
//
// The receiver (bench/webhook-receiver.ts) is a bare node:http server in a child process pinned
// to CPU 0 that reads each body and answers 200; this process, the sender side, is pinned to
// CPU 1. Every delivery is one event of about 300 bytes of JSON to one endpoint.
//
// - bare: one undici Pool of CONCURRENCY keep-alive connections, CONCURRENCY loops each POSTing
//   the next payload with Content-Type, a User-Agent and the three webhook-* fields, and reading
//   the (empty) answer. "bare, unsigned" sends a fixed signature field of the right length (the
//   least work there is); "bare, signed" computes it per request with node:crypto createHmac and
//   a KeyObject, as a hand-written sender would.
// - ours: the events are published first (one delivery each, enqueued into a fresh queue; not
//   timed: that is the publisher's cost, printed apart), then a worker with `concurrency` and
//   `perEndpoint` both CONCURRENCY and a batch of 2 × CONCURRENCY claims, sends (createWebhookSender
//   through the SSRF guard's dispatcher, the receiver's origin allowed), and settles them; timed
//   from `start()` to the last settle. Every delivery must end `succeeded`, and the receiver's
//   count must grow by exactly the number sent, or the run stops.
//
// ROUNDS rounds, the order alternating; each column reports the median deliveries per second
// (wall time) and this process's CPU time per delivery, and the ratio is the median of the
// per-round ratios.
import { createHmac, createSecretKey } from 'node:crypto'
import type { DeliveryQueue } from '@api-blocks/webhooks'
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

/** Publishes DELIVERIES events to one endpoint on `queue`, then delivers them with a worker. */
async function ours(
  url: string,
  queue: DeliveryQueue,
  onPublished: (perSecond: number) => void,
): Promise<Run> {
  const origin = new URL(url).origin
  const guard = createSsrfGuard({ allowedOrigins: [origin] })
  const registry = createEndpointRegistry({ store: new MemoryEndpointStore(), guard })
  await registry.create({ url })
  const publisher = createWebhookPublisher({ registry, queue })
  const sender = createWebhookSender({ guard })
  const publishStarted = performance.now()
  for (let index = 0; index < DELIVERIES; index += 1) {
    await publisher.publish(createEvent({ type: 'order.updated', object: orderOf(index) }))
  }
  onPublished(DELIVERIES / ((performance.now() - publishStarted) / 1000))
  let settled = 0
  let failures = 0
  let done: () => void = () => {}
  const finished = new Promise<void>((resolve) => {
    done = resolve
  })
  const worker = createDeliveryWorker({
    queue,
    registry,
    sender,
    concurrency: CONCURRENCY,
    perEndpoint: CONCURRENCY,
    batchSize: 2 * CONCURRENCY,
    onEvent: (event) => {
      if (event.type !== 'attempt') return
      if (!event.settled || event.resolution.status !== 'succeeded') failures += 1
      settled += 1
      if (settled === DELIVERIES) done()
    },
  })
  const before = cpu()
  const started = performance.now()
  worker.start()
  await finished
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
  try {
    const columns = ['bare, unsigned', 'bare, signed', 'ours, memory queue'] as const
    type Column = (typeof columns)[number]
    const runs: Record<Column, Run[]> = {
      'bare, unsigned': [],
      'bare, signed': [],
      'ours, memory queue': [],
    }
    const publishRates: number[] = []
    const ratios: number[] = []
    const cpuRatios: number[] = []
    // A warm-up of each, untimed.
    await bare(url, secret, true)
    await ours(url, new MemoryDeliveryQueue(), () => {})
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? columns : ([...columns].reverse() as Column[])
      const result = {} as Record<Column, Run>
      for (const column of order) {
        const before = await received(url)
        result[column] =
          column === 'ours, memory queue'
            ? await ours(url, new MemoryDeliveryQueue(), (rate) => publishRates.push(rate))
            : await bare(url, secret, column === 'bare, signed')
        const arrived = (await received(url)) - before
        if (arrived !== DELIVERIES)
          throw new Error(`${column}: ${arrived} of ${DELIVERIES} arrived`)
        runs[column].push(result[column])
      }
      ratios.push(result['ours, memory queue'].perSecond / result['bare, unsigned'].perSecond)
      cpuRatios.push(result['ours, memory queue'].cpuUs / result['bare, unsigned'].cpuUs)
    }
    console.log(
      `${DELIVERIES} deliveries of one ${JSON.stringify(createEvent({ type: 'order.updated', object: orderOf(0) })).length}-byte event each to a loopback node:http receiver, ${CONCURRENCY} keep-alive connections and ${CONCURRENCY} in flight, ${ROUNDS} rounds, medians`,
    )
    console.log('| sender | deliveries/s | sender CPU µs per delivery |')
    console.log('|---|---:|---:|')
    for (const column of columns) {
      console.log(
        `| ${column} | ${Math.round(median(runs[column].map((r) => r.perSecond)))} | ${median(runs[column].map((r) => r.cpuUs)).toFixed(1)} |`,
      )
    }
    console.log(
      `ours / bare unsigned, deliveries/s: ${median(ratios).toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}); CPU per delivery, ours / bare: ${median(cpuRatios).toFixed(2)}`,
    )
    console.log(
      `publishing (not in the rates above): ${Math.round(median(publishRates))} events/s into the memory queue`,
    )
    console.log('(target: ours / bare >= 0.7)')
  } finally {
    receiver.stop()
  }
}
