// Issue 4: requests per second to the reference service's POST /v1/orders without and with an
// Idempotency-Key, on the memory store, Redis and PostgreSQL, and store round trips per request.
//
// Throughput: the service runs in a child process (`npm start`'s entry, with REDIS_URL /
// DATABASE_URL as each row says and rate limits raised out of the way); autocannon drives it
// from this process with 50 connections. "with key" sends a fresh key per request (every one a
// first request: claim, run, complete); "replay" sends one key again and again (every one a
// replay). Each request also pays the rest of the stack (rate limit, negotiation, CORS …), so
// the ratio is the cost idempotency adds to a real endpoint. Targets: memory >= 80 %, Redis >= 60 %.
//
// On a 2-core machine the client competes with the server, so where `taskset` exists the
// service is pinned to CPU 0 and this process (the client) to CPU 1; Redis and PostgreSQL float.
// Each of ROUNDS rounds starts a fresh service (the example keeps its orders in memory: a heap
// grown by earlier rounds makes later collections dearer), warms both paths, then measures
// SLICES short slices of each of the no-key and new-key columns, interleaved A B B A A B …,
// and two of the replay column. Per round, each column's slices are summed: req/s, and the
// service's own CPU time per request (from /proc, user + system). The table shows medians over
// the rounds, and the median of the per-round ratios. This machine's speed drifts by tens of
// percent over seconds; fine interleaving puts the drift on both columns alike. The CPU ratio
// is what a server with its own core would be limited by, and the one to hold targets to:
// autocannon, on one core, is near its own limit in the no-key column, where the server idles
// a little, which makes the req/s ratio look better.
//
// Round trips: the same service in this process, its idempotency store wrapped to count calls
// (each call of the memory, Redis and PostgreSQL stores is one round trip: one EVALSHA or one
// SQL statement, as their own tests check). Targets: a first request <= 2, a replay 1.
import { createRequire } from 'node:module'
import type { IdempotencyStore } from '@api-blocks/idempotency'
import { MemoryIdempotencyStore } from '@api-blocks/idempotency'
import { createService } from '../../examples/service/src/app.ts'
import type { Service } from '../service-process.ts'
import { median, pinClient, pinned, startService } from '../service-process.ts'

interface AutocannonResult {
  requests: { average: number; total: number }
  non2xx: number
  errors: number
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

const SLICE_S = 1.5
const SLICES = 6
const WARM_UP_S = 2
const ROUNDS = 5
const body = JSON.stringify({ customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] })
interface Load {
  rps: number
  cpuUs: number
  requests: number
}

async function load(
  service: Service,
  headers: () => Record<string, string>,
  seconds: number,
): Promise<Load> {
  const before = service.cpu()
  const result = await autocannon({
    url: `${service.url}/v1/orders`,
    connections: 50,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        setupRequest: (request: { headers: Record<string, string> }) => {
          request.headers = { ...request.headers, ...headers() }
          return request
        },
      },
    ],
  })
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`unexpected answers: ${result.errors} errors, ${result.non2xx} non-2xx`)
  }
  return {
    rps: result.requests.total / seconds,
    cpuUs: (service.cpu() - before) / result.requests.total,
    requests: result.requests.total,
  }
}

type Column = 'none' | 'first' | 'replay'

// One round: a fresh service (so every round starts from the same heap: the example keeps its
// orders in memory, and a heap grown by earlier rounds makes later collections dearer), both
// paths warmed, then the three columns, in an order that alternates between rounds.
async function round(env: Record<string, string>, index: number): Promise<Record<Column, Load>> {
  const service = await startService(env)
  try {
    // Every column sends one random header, so the client does the same work per request in
    // each: x-nonce, or the idempotency key.
    const nonce = () => ({ 'x-nonce': crypto.randomUUID() })
    // The first request with this key completes before the load, so every request replays
    // (concurrent first requests would get the in-flight 409 instead).
    const replayKey = crypto.randomUUID()
    const seed = await fetch(`${service.url}/v1/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': replayKey },
      body,
    })
    if (seed.status !== 201) throw new Error(`seeding the replay key answered ${seed.status}`)
    await seed.arrayBuffer()
    const columns: Record<Column, () => Record<string, string>> = {
      none: nonce,
      first: () => ({ 'idempotency-key': crypto.randomUUID() }),
      replay: () => ({ 'idempotency-key': replayKey, ...nonce() }),
    }
    await load(service, columns.none, WARM_UP_S) // warm-up, both paths
    await load(service, columns.first, WARM_UP_S)
    // Short slices in the order A B B A A B B A …, A being the no-key column in even rounds and
    // the new-key column in odd ones: the machine's speed drifts over seconds, and the slice
    // after a switch runs a little differently; both fall on the two columns alike.
    const [a, b]: [Column, Column] = index % 2 === 0 ? ['none', 'first'] : ['first', 'none']
    const order: Column[] = ['replay']
    for (let slice = 0; slice < SLICES; slice += 1)
      order.push(...(slice % 2 === 0 ? [a, b] : [b, a]))
    order.push('replay')
    const slices: Record<Column, Load[]> = { none: [], first: [], replay: [] }
    const trace: string[] = []
    for (const column of order) {
      const slice = await load(service, columns[column], SLICE_S)
      slices[column].push(slice)
      trace.push(`${column} ${Math.round(slice.cpuUs)}`)
    }
    // IDEMPOTENCY_BENCH_TRACE=1 prints each slice's CPU µs per request.
    if (process.env['IDEMPOTENCY_BENCH_TRACE']) console.log(trace.join(', '))
    const total = (loads: Load[]): Load => {
      const requests = loads.reduce((sum, load) => sum + load.requests, 0)
      const cpu = loads.reduce((sum, load) => sum + load.cpuUs * load.requests, 0)
      const seconds = loads.reduce((sum, load) => sum + load.requests / load.rps, 0)
      return { rps: requests / seconds, cpuUs: cpu / requests, requests }
    }
    return { none: total(slices.none), first: total(slices.first), replay: total(slices.replay) }
  } finally {
    service.stop()
  }
}

async function throughput(label: string, env: Record<string, string>) {
  const runs: Record<Column, Load>[] = []
  for (let index = 0; index < ROUNDS; index += 1) runs.push(await round(env, index))
  console.log(
    `${label}: new/no key CPU ratio by round: ${runs
      .map((run) => `${Math.round((run.none.cpuUs / run.first.cpuUs) * 100)} %`)
      .join(', ')}`,
  )
  const rps = (column: Column) => median(runs.map((run) => run[column].rps))
  const cpu = (column: Column) => median(runs.map((run) => run[column].cpuUs))
  // Ratios paired within a round (same process, same minute), then the median: the machine's
  // speed drifts between rounds far more than between two columns of one round.
  const ratio = (of: (run: Record<Column, Load>) => number) => median(runs.map(of))
  const percent = (value: number) => (Number.isFinite(value) ? `${Math.round(value * 100)} %` : '-')
  return {
    store: label,
    'no key req/s': Math.round(rps('none')),
    'new key req/s': Math.round(rps('first')),
    'replay req/s': Math.round(rps('replay')),
    'new/no key (req/s)': percent(ratio((run) => run.first.rps / run.none.rps)),
    'CPU µs/req no key': Math.round(cpu('none')),
    'new key': Math.round(cpu('first')),
    replay: Math.round(cpu('replay')),
    'new/no key (CPU)': percent(ratio((run) => run.none.cpuUs / run.first.cpuUs)),
    'range (CPU)': `${percent(Math.min(...runs.map((run) => run.none.cpuUs / run.first.cpuUs)))}–${percent(Math.max(...runs.map((run) => run.none.cpuUs / run.first.cpuUs)))}`,
  }
}

function counting(store: IdempotencyStore): { store: IdempotencyStore; calls: () => number } {
  let calls = 0
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        calls += 1
        return value.apply(target, args)
      }
    },
  })
  return { store: counted, calls: () => calls }
}

async function roundTrips() {
  const { store, calls } = counting(new MemoryIdempotencyStore())
  const service = createService({
    idempotencyStore: store,
    rateLimits: [{ name: 'x', quota: 1e9, windowSeconds: 1 }],
    // The address that scopes the keys (over HTTP, the adapter records the socket's).
    clientAddress: () => '127.0.0.1',
  })
  const post = (key: string) =>
    service(
      new Request('http://bench.test/v1/orders', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body,
      }),
    )
  const before = calls()
  for (let i = 0; i < 100; i += 1) await (await post(`first-${i}`)).arrayBuffer()
  const afterFirst = calls()
  for (let i = 0; i < 100; i += 1) await (await post('first-0')).arrayBuffer()
  const afterReplay = calls()
  return { first: (afterFirst - before) / 100, replay: (afterReplay - afterFirst) / 100 }
}

export default async function run(): Promise<void> {
  const trips = await roundTrips()
  console.log(
    `store round trips per request: first ${trips.first} (claim + complete), replay ${trips.replay} (claim answers the stored response)`,
  )
  console.log(
    pinned
      ? 'service pinned to CPU 0, client to CPU 1 (taskset)'
      : 'no taskset: service and client share the CPUs',
  )
  pinClient()
  // IDEMPOTENCY_BENCH_STORES=memory,redis,postgres (the default: all three) picks the rows.
  const wanted = (process.env['IDEMPOTENCY_BENCH_STORES'] ?? 'memory,redis,postgres').split(',')
  const rows = []
  if (wanted.includes('memory')) rows.push(await throughput('memory', {}))
  const redis = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'
  const database = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
  const prefix = `bench:${crypto.randomUUID()}:`
  if (wanted.includes('redis')) {
    rows.push(await throughput('Redis', { REDIS_URL: redis, REDIS_PREFIX: prefix }))
  }
  const schema = `bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  if (wanted.includes('postgres')) {
    rows.push(await throughput('PostgreSQL', { DATABASE_URL: database, DATABASE_SCHEMA: schema }))
  }
  console.table(rows)
  console.log('(Redis: rate-limit state in Redis as well, one EVALSHA per request in every column)')
  const pg = (await import('pg')).default
  const admin = new pg.Pool({ connectionString: database })
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await admin.end()
  const { createClient } = await import('redis')
  const client = createClient({ url: redis })
  await client.connect()
  const keys = await client.keys(`${prefix}*`)
  if (keys.length > 0) await client.del(keys)
  await client.close()
}
