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
// The columns alternate for ROUNDS rounds and the table shows medians, both req/s and the
// service's own CPU time per request (from /proc, user + system): the second is what a server
// with its own core would be limited by, and moves far less with the client and the machine.
//
// Round trips: the same service in this process, its idempotency store wrapped to count calls
// (each call of the memory, Redis and PostgreSQL stores is one round trip: one EVALSHA or one
// SQL statement, as their own tests check). Targets: a first request <= 2, a replay 1.
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { IdempotencyStore } from '@api-blocks/idempotency'
import { MemoryIdempotencyStore } from '@api-blocks/idempotency'
import { createService } from '../../examples/service/src/app.ts'

interface AutocannonResult {
  requests: { average: number; total: number }
  non2xx: number
  errors: number
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

const DURATION_S = 3
const ROUNDS = 3
const body = JSON.stringify({ customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] })
const main = fileURLToPath(new URL('../../examples/service/src/main.ts', import.meta.url))
const pinned =
  process.platform === 'linux' && spawnSync('taskset', ['-c', '1', 'true']).status === 0

interface Service {
  url: string
  /** The service process's CPU time so far (user + system), in µs; NaN where /proc is absent. */
  cpu(): number
  stop(): void
}

async function startService(env: Record<string, string>): Promise<Service> {
  const args = ['--conditions=@api-blocks/source', main]
  const child = spawn(
    pinned ? 'taskset' : process.execPath,
    pinned ? ['-c', '0', process.execPath, ...args] : args,
    {
      env: {
        ...process.env,
        PORT: '0',
        RATE_LIMIT_PER_SECOND: '100000000',
        RATE_LIMIT_PER_HOUR: '100000000',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  const cpu = () => {
    try {
      // /proc/<pid>/stat: utime and stime are the 14th and 15th fields, in clock ticks (100/s).
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')
      return (Number(fields?.[11]) + Number(fields?.[12])) * 10_000
    } catch {
      return Number.NaN
    }
  }
  let output = ''
  child.stdout.setEncoding('utf8')
  for await (const chunk of child.stdout) {
    output += chunk
    const match = /listening on (http:\/\/\S+)/.exec(output)
    if (match) return { url: match[1] ?? '', cpu, stop: () => child.kill() }
  }
  throw new Error(`the service did not start:\n${output}`)
}

interface Load {
  rps: number
  cpuUs: number
}

async function load(service: Service, headers: () => Record<string, string>): Promise<Load> {
  const before = service.cpu()
  const result = await autocannon({
    url: `${service.url}/v1/orders`,
    connections: 50,
    duration: DURATION_S,
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
    rps: result.requests.average,
    cpuUs: (service.cpu() - before) / result.requests.total,
  }
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN

async function throughput(label: string, env: Record<string, string>) {
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
    const columns = {
      none: nonce,
      first: () => ({ 'idempotency-key': crypto.randomUUID() }),
      replay: () => ({ 'idempotency-key': replayKey, ...nonce() }),
    }
    await load(service, columns.none) // warm-up, both paths
    await load(service, columns.first)
    const runs: Record<keyof typeof columns, Load[]> = { none: [], first: [], replay: [] }
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const column of ['none', 'first', 'replay'] as const) {
        runs[column].push(await load(service, columns[column]))
      }
    }
    const rps = (column: keyof typeof columns) => median(runs[column].map((run) => run.rps))
    const cpu = (column: keyof typeof columns) => median(runs[column].map((run) => run.cpuUs))
    const percent = (ratio: number) =>
      Number.isFinite(ratio) ? `${Math.round(ratio * 100)} %` : '-'
    return {
      store: label,
      'no key req/s': Math.round(rps('none')),
      'new key req/s': Math.round(rps('first')),
      'replay req/s': Math.round(rps('replay')),
      'new/no key (req/s)': percent(rps('first') / rps('none')),
      'CPU µs/req no key': Math.round(cpu('none')),
      'new key': Math.round(cpu('first')),
      replay: Math.round(cpu('replay')),
      'new/no key (CPU)': percent(cpu('none') / cpu('first')),
    }
  } finally {
    service.stop()
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
  if (pinned) spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)])
  const rows = [await throughput('memory', {})]
  const redis = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'
  const database = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
  const prefix = `bench:${crypto.randomUUID()}:`
  rows.push(await throughput('Redis', { REDIS_URL: redis, REDIS_PREFIX: prefix }))
  const schema = `bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  rows.push(await throughput('PostgreSQL', { DATABASE_URL: database, DATABASE_SCHEMA: schema }))
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
