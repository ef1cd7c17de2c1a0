// Issue 13: the reference service's load figures, GET of one order and keyed POST of a new
// order, 10 connections, as a client sees them (req/s and latency percentiles).
//
// The peer is the service itself at another commit: set SERVICE_BASELINE to the folder of a
// checkout of the repository (its dependencies installed), and both run in the same rounds,
// alternating which goes first. Without it, only this checkout runs. Each round starts a fresh
// service process (orders live in memory; a grown heap makes later collections dearer), warms
// it for 1 s, then measures each column for SLICE_S seconds: req/s and latency as autocannon saw
// them, and the service's own CPU time per request (from /proc), which the machine's other load
// disturbs less. Rate limits are raised out of the way; the service logs at its default level,
// as an operator would run it (lines dropped).
//
// Where `taskset` exists the service is pinned to CPU 0 and autocannon (this process) to CPU 1.
//
// Since issue 14 every /v1 route wants a bearer token: when the service under test answers an
// unauthenticated GET /v1/orders with 401, the suite gets a token by client credentials as the
// demo client (scopes read:orders write:orders) and sends it with every request; a baseline
// from before issue 14 answers 200 and gets none. The token lives 15 minutes, longer than a
// round.
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { Service } from '../service-process.ts'
import { median, pinClient, pinned, startService } from '../service-process.ts'

interface AutocannonResult {
  requests: { total: number }
  latency: { p50: number; p99: number }
  non2xx: number
  errors: number
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

const ROUNDS = Number(process.env['SERVICE_BENCH_ROUNDS'] ?? 4)
const SLICE_S = 3
const CONNECTIONS = 10
const body = JSON.stringify({ customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] })
interface Column {
  rps: number
  p50: number
  p99: number
  /** The service's CPU time (user + system, all threads) per request, µs. */
  cpuUs: number
}

async function run(
  service: Service,
  options: Record<string, unknown>,
  seconds: number,
): Promise<Column> {
  const before = service.cpu()
  const result = await autocannon({ connections: CONNECTIONS, duration: seconds, ...options })
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`unexpected answers: ${result.errors} errors, ${result.non2xx} non-2xx`)
  }
  return {
    rps: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: (service.cpu() - before) / result.requests.total,
  }
}

// `{ authorization: 'Bearer …' }` when the service wants a token, else `{}`.
async function credentials(service: Service): Promise<Record<string, string>> {
  const probe = await fetch(`${service.url}/v1/orders`)
  await probe.arrayBuffer()
  if (probe.status !== 401) return {}
  const response = await fetch(`${service.url}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa('demo-backend:demo-backend-secret')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials&scope=read%3Aorders+write%3Aorders',
  })
  const json = (await response.json()) as { access_token?: string }
  if (response.status !== 200 || json.access_token === undefined) {
    throw new Error(
      `the service's token endpoint answered ${response.status} ${JSON.stringify(json)}`,
    )
  }
  return { authorization: `Bearer ${json.access_token}` }
}

async function measure(service: Service): Promise<{ get: Column; post: Column }> {
  const auth = await credentials(service)
  const created = await fetch(`${service.url}/v1/orders`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': crypto.randomUUID(),
      ...auth,
    },
    body,
  })
  if (created.status !== 201) throw new Error(`creating an order answered ${created.status}`)
  const location = created.headers.get('location') ?? ''
  const orderUrl = new URL(location, service.url).href
  const get = { url: orderUrl, headers: auth }
  const post = {
    url: `${service.url}/v1/orders`,
    requests: [
      {
        method: 'POST',
        body,
        setupRequest: (request: { headers: Record<string, string> }) => {
          request.headers = {
            'content-type': 'application/json',
            'idempotency-key': crypto.randomUUID(),
            ...auth,
          }
          return request
        },
      },
    ],
  }
  await run(service, get, 1)
  await run(service, post, 1)
  return { get: await run(service, get, SLICE_S), post: await run(service, post, SLICE_S) }
}

export default async function main(): Promise<void> {
  const here = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')
  const baseline = process.env['SERVICE_BASELINE']
  const targets = baseline ? { baseline, current: here } : { current: here }
  pinClient()
  const results: Record<string, { get: Column; post: Column }[]> = {}
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = Object.entries(targets)
    if (round % 2 === 1) order.reverse()
    for (const [name, root] of order) {
      const service = await startService({}, root)
      try {
        const measured = await measure(service)
        results[name] = [...(results[name] ?? []), measured]
      } finally {
        service.stop()
      }
    }
  }
  console.log(
    `${CONNECTIONS} connections, ${ROUNDS} rounds of ${SLICE_S} s per column, medians${pinned ? ', service on CPU 0, client on CPU 1' : ''}`,
  )
  console.log(
    '| build | GET req/s | GET p50 / p99 ms | GET CPU µs/req | keyed POST req/s | POST p50 / p99 ms | POST CPU µs/req |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const [name, rounds] of Object.entries(results)) {
    const get = (pick: (c: { get: Column; post: Column }) => number, digits = 0) =>
      median(rounds.map(pick)).toFixed(digits)
    console.log(
      `| ${name} | ${get((r) => r.get.rps)} | ${get((r) => r.get.p50, 1)} / ${get((r) => r.get.p99, 1)} | ${get((r) => r.get.cpuUs)} | ${get((r) => r.post.rps)} | ${get((r) => r.post.p50, 1)} / ${get((r) => r.post.p99, 1)} | ${get((r) => r.post.cpuUs)} |`,
    )
  }
  for (const [name, rounds] of Object.entries(results)) {
    console.log(
      `${name} per round GET/POST req/s: ${rounds.map((r) => `${r.get.rps.toFixed(0)}/${r.post.rps.toFixed(0)}`).join(', ')}; CPU µs/req: ${rounds.map((r) => `${r.get.cpuUs.toFixed(0)}/${r.post.cpuUs.toFixed(0)}`).join(', ')}`,
    )
  }
  // Paired in the round (same minute): the machine's speed drifts between rounds far more.
  const before = results['baseline']
  const after = results['current']
  if (before !== undefined && after !== undefined) {
    const ratios = (pick: (c: { get: Column; post: Column }) => number) => {
      const values = after.map((r, i) => pick(r) / pick(before[i] as { get: Column; post: Column }))
      return `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`
    }
    console.log(
      `current / baseline, medians of per-round ratios (range): GET req/s ${ratios((r) => r.get.rps)}, CPU ${ratios((r) => r.get.cpuUs)}; keyed POST req/s ${ratios((r) => r.post.rps)}, CPU ${ratios((r) => r.post.cpuUs)}`,
    )
  }
}
