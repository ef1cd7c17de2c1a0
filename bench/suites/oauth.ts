// Issue 14: the token endpoint (client_credentials) and introspection, requests per second,
// @api-blocks/oauth against node-oidc-provider configured alike (see ../oauth-servers.ts).
// Target: ours at least 2x theirs on each.
//
// Each server runs in its own child process with the same Node binary, pinned to CPU 0 where
// `taskset` exists; autocannon (this process, 10 connections) is pinned to CPU 1. Each of
// ROUNDS rounds starts both servers afresh (both keep every token in memory: a heap grown by
// earlier rounds makes later collections dearer), then:
// 1. token endpoint: warms each, then SLICES slices of SLICE_S seconds per server, interleaved
//    A B B A …, A being ours in even rounds and theirs in odd ones;
// 2. introspection: each server issues a pool of POOL tokens (oidc-provider's memory adapter
//    is an LRU of 1,000 entries, so the pool must stay under it and nothing may be issued
//    during the run); every token of both pools is introspected before and after the run and
//    must be `active: true` (a run that introspects inactive tokens measures nothing); then
//    warm-up and interleaved slices as above, each request naming the next token of the pool.
// Per round, each column's slices are summed: req/s, and the server's own CPU time per request
// (from /proc, user + system). The table shows medians over the rounds, and the median of the
// per-round ratios (paired in the same minute: this machine's speed drifts by tens of percent
// between rounds). The CPU ratio is what a server with its own core would be limited by; the
// req/s ratio is what a client saw, and is lower when autocannon, on one core, nears its own
// limit.
import { createRequire } from 'node:module'
import type { ServerKind } from '../oauth-servers.ts'
import { CLIENT_ID, CLIENT_SECRET, paths, SCOPE, startOAuthServer } from '../oauth-servers.ts'
import type { Service } from '../service-process.ts'
import { median, pinClient, pinned } from '../service-process.ts'

interface AutocannonResult {
  requests: { total: number }
  non2xx: number
  errors: number
  statusCodeStats: Record<string, { count: number }>
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

const ROUNDS = Number(process.env['OAUTH_BENCH_ROUNDS'] ?? 5)
const SLICE_S = 2
const SLICES = 4
const WARM_UP_S = 2
const CONNECTIONS = 10
const POOL = 500

const kinds: readonly ServerKind[] = ['ours', 'theirs']
type Endpoint = 'token' | 'introspect'
interface Load {
  rps: number
  cpuUs: number
  requests: number
}
type Round = Record<Endpoint, Record<ServerKind, Load>>

// RFC 6749 §2.3.1: client id and secret form-url-encoded, then Basic.
const authorization = `Basic ${btoa(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`)}`
const form = { authorization, 'content-type': 'application/x-www-form-urlencoded' }
const tokenBody = new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE }).toString()

async function issue(server: Service, kind: ServerKind): Promise<string> {
  const response = await fetch(server.url + paths[kind].token, {
    method: 'POST',
    headers: form,
    body: tokenBody,
  })
  const json = (await response.json()) as { access_token?: string; token_type?: string }
  if (response.status !== 200 || typeof json.access_token !== 'string') {
    throw new Error(
      `${kind}: the token endpoint answered ${response.status} ${JSON.stringify(json)}`,
    )
  }
  return json.access_token
}

async function introspect(server: Service, kind: ServerKind, token: string): Promise<unknown> {
  const response = await fetch(server.url + paths[kind].introspect, {
    method: 'POST',
    headers: form,
    body: `token=${encodeURIComponent(token)}`,
  })
  return response.json()
}

// Every token of the pool is active (and names our client and scope), or the run is void.
async function assertActive(
  server: Service,
  kind: ServerKind,
  pool: readonly string[],
  when: string,
) {
  for (const token of pool) {
    const answer = (await introspect(server, kind, token)) as Record<string, unknown>
    if (
      answer['active'] !== true ||
      answer['client_id'] !== CLIENT_ID ||
      answer['scope'] !== SCOPE
    ) {
      throw new Error(
        `${kind}: a pool token is not active ${when} the run: ${JSON.stringify(answer)}`,
      )
    }
  }
}

function requests(server: Service, kind: ServerKind, endpoint: Endpoint, pool: readonly string[]) {
  if (endpoint === 'token') {
    return { url: server.url + paths[kind].token, method: 'POST', headers: form, body: tokenBody }
  }
  let next = 0
  return {
    url: server.url + paths[kind].introspect,
    requests: [
      {
        method: 'POST',
        headers: form,
        setupRequest: (request: { body?: string }) => {
          request.body = `token=${encodeURIComponent(pool[next % pool.length] as string)}`
          next += 1
          return request
        },
      },
    ],
  }
}

async function load(server: Service, options: Record<string, unknown>, seconds: number) {
  const before = server.cpu()
  const result = await autocannon({ connections: CONNECTIONS, duration: seconds, ...options })
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(
      `unexpected answers: ${result.errors} errors, ${result.non2xx} non-2xx ${JSON.stringify(result.statusCodeStats)}`,
    )
  }
  return {
    rps: result.requests.total / seconds,
    cpuUs: (server.cpu() - before) / result.requests.total,
    requests: result.requests.total,
  }
}

function total(loads: readonly Load[]): Load {
  const requests = loads.reduce((sum, one) => sum + one.requests, 0)
  const cpu = loads.reduce((sum, one) => sum + one.cpuUs * one.requests, 0)
  const seconds = loads.reduce((sum, one) => sum + one.requests / one.rps, 0)
  return { rps: requests / seconds, cpuUs: cpu / requests, requests }
}

async function measure(
  servers: Record<ServerKind, Service>,
  endpoint: Endpoint,
  pools: Record<ServerKind, readonly string[]>,
  index: number,
): Promise<Record<ServerKind, Load>> {
  const options = (kind: ServerKind) => requests(servers[kind], kind, endpoint, pools[kind])
  for (const kind of kinds) await load(servers[kind], options(kind), WARM_UP_S)
  const [a, b] = index % 2 === 0 ? kinds : [...kinds].reverse()
  const slices: Record<ServerKind, Load[]> = { ours: [], theirs: [] }
  for (let slice = 0; slice < SLICES; slice += 1) {
    for (const kind of slice % 2 === 0 ? [a, b] : [b, a]) {
      const server = servers[kind as ServerKind]
      slices[kind as ServerKind].push(await load(server, options(kind as ServerKind), SLICE_S))
    }
  }
  return { ours: total(slices.ours), theirs: total(slices.theirs) }
}

async function round(index: number): Promise<Round> {
  const servers = {
    ours: await startOAuthServer('ours'),
    theirs: await startOAuthServer('theirs'),
  }
  try {
    const none = { ours: [], theirs: [] }
    const token = await measure(servers, 'token', none, index)
    // The pools are issued after the token runs: those filled oidc-provider's LRU.
    const pools: Record<ServerKind, string[]> = { ours: [], theirs: [] }
    for (const kind of kinds) {
      for (let i = 0; i < POOL; i += 1) pools[kind].push(await issue(servers[kind], kind))
      await assertActive(servers[kind], kind, pools[kind], 'before')
    }
    const introspection = await measure(servers, 'introspect', pools, index)
    for (const kind of kinds) await assertActive(servers[kind], kind, pools[kind], 'after')
    return { token, introspect: introspection }
  } finally {
    servers.ours.stop()
    servers.theirs.stop()
  }
}

const ratioText = (values: readonly number[]) =>
  `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`

export default async function run(): Promise<void> {
  console.log(
    `${CONNECTIONS} connections, ${ROUNDS} rounds, ${SLICES} interleaved slices of ${SLICE_S} s per column and round, ${POOL}-token introspection pools; ${pinned ? 'each server pinned to CPU 0 in its own process, autocannon to CPU 1' : 'no taskset: servers and client share the CPUs'}`,
  )
  pinClient()
  const rounds: Round[] = []
  for (let index = 0; index < ROUNDS; index += 1) {
    const result = await round(index)
    rounds.push(result)
    console.log(
      `round ${index + 1}: ${(['token', 'introspect'] as const)
        .map(
          (endpoint) =>
            `${endpoint} ${Math.round(result[endpoint].ours.rps)} / ${Math.round(result[endpoint].theirs.rps)} req/s, ${result[endpoint].ours.cpuUs.toFixed(0)} / ${result[endpoint].theirs.cpuUs.toFixed(0)} µs`,
        )
        .join('; ')} (ours / oidc-provider)`,
    )
  }
  console.log(
    '| endpoint | ours req/s | oidc-provider req/s | ratio req/s (range) | ours CPU µs/req | oidc-provider CPU µs/req | ratio CPU (range) |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const endpoint of ['token', 'introspect'] as const) {
    const of = (kind: ServerKind, pick: (load: Load) => number) =>
      median(rounds.map((one) => pick(one[endpoint][kind])))
    console.log(
      `| ${endpoint === 'token' ? 'POST /token (client_credentials)' : 'introspection'} | ${Math.round(of('ours', (l) => l.rps))} | ${Math.round(of('theirs', (l) => l.rps))} | ${ratioText(rounds.map((one) => one[endpoint].ours.rps / one[endpoint].theirs.rps))} | ${of('ours', (l) => l.cpuUs).toFixed(1)} | ${of('theirs', (l) => l.cpuUs).toFixed(1)} | ${ratioText(rounds.map((one) => one[endpoint].theirs.cpuUs / one[endpoint].ours.cpuUs))} |`,
    )
  }
  console.log('(ratios: ours over oidc-provider, per round then the median; target >= 2)')
}
