// The framework adapters against each framework's own way of answering the same small JSON:
// bare node:http vs @api-blocks/node, bare Express vs @api-blocks/express, bare Fastify vs
// @api-blocks/fastify, each adapter in its default mode (native undici Request and Response)
// and with the opt-in fast path (`lightweight: true`) side by side, and the same Fetch handler
// on Hono with @hono/node-server. Every server
// listens on 127.0.0.1 port 0 in this process; autocannon (in-process, its load in one worker
// thread so the server keeps the main thread) drives 10 connections.
//
// Two measures per run: req/s as the client saw it, and the CPU time the server's thread spent
// per request (process.threadCpuUsage around the run). On a 2-core machine one autocannon
// thread cannot saturate node:http, so req/s is partly the client's speed and moves with
// whatever else runs on the machine; CPU per request is the cost the adapter adds, and the
// overhead column is computed from it: adapter CPU / bare CPU - 1 (target for the node
// adapter: at most 15 %).
//
// Each group warms every server up, then runs ROUNDS rounds that alternate the servers, so
// drift on a shared machine hits both sides of a comparison alike; the table shows medians.
//
// Then, without the network: the same JSON written to a real ServerResponse that has no
// socket (node:http only serialises it), by hand and through handleNodeRequest in both modes:
// the cost of the conversion itself, free of the machine's noise.
//
// The globals are process-wide, and `Response.json()` in the handler builds whatever class
// `globalThis.Response` is: before every warm-up and round, each target sets the globals its
// mode needs (restoreNativeGlobals / installLightweightGlobals). Hono runs last because
// @hono/node-server replaces globalThis.Request and Response for good.
import { once } from 'node:events'
import type { RequestListener, Server } from 'node:http'
import { createServer, IncomingMessage, ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { Socket } from 'node:net'
import { toExpressHandler } from '@api-blocks/express'
import { fastifyFetchHandler } from '@api-blocks/fastify'
import {
  handleNodeRequest,
  installLightweightGlobals,
  restoreNativeGlobals,
  toNodeListener,
} from '@api-blocks/node'
import { serve as honoServe } from '@hono/node-server'
import express from 'express'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { Bench } from 'tinybench'

interface AutocannonResult {
  requests: { average: number; total: number }
  latency: { p99: number }
  errors: number
  non2xx: number
}
type Autocannon = (options: {
  url: string
  connections: number
  duration: number
  workers?: number
}) => Promise<AutocannonResult>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

const CONNECTIONS = 10
const WARMUP_S = 1
const ROUND_S = 1
const ROUNDS = 6
const payload = () => ({ id: 42, name: 'widget', tags: ['a', 'b'], price: 9.99, active: true })
const handler = async (_request: Request): Promise<Response> => Response.json(payload())

interface Target {
  name: string
  /** The row this one is compared with (its framework without the adapter). */
  baseline?: string
  /** The globals this target runs with; left as they are when absent (Hono's own). */
  globals?: 'native' | 'lightweight'
  start(): Promise<{ url: string; close(): Promise<void> }>
}

// Puts the globals `target` runs with in place.
function enter(target: Target): void {
  if (target.globals === 'native') restoreNativeGlobals()
  else if (target.globals === 'lightweight' && !installLightweightGlobals()) {
    throw new Error(`${target.name}: the lightweight globals could not be installed`)
  }
}

async function listening(server: Server) {
  if (!server.listening) await once(server, 'listening')
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const node = (listener: RequestListener) => () =>
  listening(createServer(listener).listen(0, '127.0.0.1'))

const bareNode: RequestListener = (_req, res) => {
  const body = JSON.stringify(payload())
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  })
  res.end(body)
}

// Both Express apps answer the same headers: no ETag (res.json would hash the body), no
// X-Powered-By.
const expressApp = () => express().set('etag', false).disable('x-powered-by')

const groups: Target[][] = [
  [
    { name: 'node:http (bare)', globals: 'native', start: node(bareNode) },
    {
      name: '@api-blocks/node (default: native objects)',
      baseline: 'node:http (bare)',
      globals: 'native',
      start: () => node(toNodeListener(handler))(),
    },
    {
      name: '@api-blocks/node, lightweight: true',
      baseline: 'node:http (bare)',
      globals: 'lightweight',
      start: () => node(toNodeListener(handler, { lightweight: true }))(),
    },
  ],
  [
    {
      name: 'express (bare)',
      globals: 'native',
      start: () =>
        listening(
          expressApp()
            .get('/', (_req, res) => {
              res.json(payload())
            })
            .listen(0, '127.0.0.1'),
        ),
    },
    {
      name: '@api-blocks/express (default: native objects)',
      baseline: 'express (bare)',
      globals: 'native',
      start: () => listening(expressApp().use(toExpressHandler(handler)).listen(0, '127.0.0.1')),
    },
    {
      name: '@api-blocks/express, lightweight: true',
      baseline: 'express (bare)',
      globals: 'lightweight',
      start: () =>
        listening(
          expressApp()
            .use(toExpressHandler(handler, { lightweight: true }))
            .listen(0, '127.0.0.1'),
        ),
    },
  ],
  [
    {
      name: 'fastify (bare)',
      globals: 'native',
      start: async () => {
        const app = Fastify()
        app.get('/', async () => payload())
        await app.listen({ port: 0, host: '127.0.0.1' })
        return listening(app.server)
      },
    },
    {
      name: '@api-blocks/fastify (default: native objects)',
      baseline: 'fastify (bare)',
      globals: 'native',
      start: async () => {
        const app = Fastify()
        await app.register(fastifyFetchHandler, { handler })
        await app.listen({ port: 0, host: '127.0.0.1' })
        return listening(app.server)
      },
    },
    {
      name: '@api-blocks/fastify, lightweight: true',
      baseline: 'fastify (bare)',
      globals: 'lightweight',
      start: async () => {
        const app = Fastify()
        await app.register(fastifyFetchHandler, { handler, lightweight: true })
        await app.listen({ port: 0, host: '127.0.0.1' })
        return listening(app.server)
      },
    },
  ],
  [
    { name: 'node:http (bare), again', globals: 'native', start: node(bareNode) },
    {
      name: 'hono + @hono/node-server',
      baseline: 'node:http (bare), again',
      start: () => {
        const app = new Hono()
        app.all('/*', (c) => handler(c.req.raw))
        return listening(honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
      },
    },
  ],
]

const load = (url: string, duration: number) =>
  autocannon({ url, connections: CONNECTIONS, duration, workers: 1 })

/** One run: client-side req/s and p99, and the server thread's CPU µs per request. */
async function measure(url: string, duration: number) {
  const before = process.threadCpuUsage()
  const result = await load(url, duration)
  const after = process.threadCpuUsage()
  const cpu = after.user - before.user + (after.system - before.system)
  return { result, cpuPerRequest: cpu / result.requests.total }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2
}

interface Row {
  name: string
  baseline: string | undefined
  rps: number[]
  p99: number[]
  cpu: number[]
  /** adapter CPU per request / baseline CPU per request, per round. */
  costs: number[]
}

// A GET as node:http would hand it over, with a response that serialises into memory.
const socket = new Socket()
const rawHeaders = [
  'Host',
  '127.0.0.1:45678',
  'User-Agent',
  'autocannon',
  'Connection',
  'keep-alive',
]
function exchange() {
  const req = new IncomingMessage(socket)
  req.method = 'GET'
  req.url = '/v1/widgets/42'
  req.rawHeaders = rawHeaders
  return { req, res: new ServerResponse(req) }
}
let sink = 0

interface ConversionCost {
  bare: number
  native: number
  lightweight: number
}

async function conversionCost(): Promise<ConversionCost> {
  const bench = new Bench({ time: 1000, warmupTime: 200 })
  bench.add('node:http by hand', async () => {
    const { req, res } = exchange()
    bareNode(req, res)
    sink += res.writableLength
  })
  bench.add(
    'handleNodeRequest (default: native objects)',
    async () => {
      const { req, res } = exchange()
      await handleNodeRequest(handler, req, res)
      sink += res.writableLength
    },
    { beforeAll: () => restoreNativeGlobals() },
  )
  bench.add(
    'handleNodeRequest, lightweight: true',
    async () => {
      const { req, res } = exchange()
      await handleNodeRequest(handler, req, res, { lightweight: true })
      sink += res.writableLength
    },
    { beforeAll: () => void installLightweightGlobals(), afterAll: () => restoreNativeGlobals() },
  )
  await bench.run()
  const ns = (name: string) => {
    const result = bench.getTask(name)?.result
    if (result === undefined || !('latency' in result)) throw new Error(`${name} did not run`)
    return result.latency.p50 * 1e6
  }
  // Both wrote the same bytes (the Date header aside), or the comparison means nothing.
  if (sink === 0) throw new Error('nothing was written')
  return {
    bare: ns('node:http by hand'),
    native: ns('handleNodeRequest (default: native objects)'),
    lightweight: ns('handleNodeRequest, lightweight: true'),
  }
}

export default async function (): Promise<void> {
  const rows: Row[] = []
  let conversion: ConversionCost = { bare: 0, native: 0, lightweight: 0 }
  for (const [index, group] of groups.entries()) {
    // Before Hono replaces the globals for good.
    if (index === groups.length - 1) {
      conversion = await conversionCost()
      restoreNativeGlobals()
    }
    const started = []
    for (const target of group) started.push({ target, server: await target.start() })
    const reference = await (await fetch(started[0]!.server.url)).text()
    for (const { target, server } of started) {
      enter(target)
      const body = await (await fetch(server.url)).text()
      if (body !== reference) throw new Error(`${target.name} answers ${body}, not ${reference}`)
      await load(server.url, WARMUP_S)
    }
    const groupRows = started.map(({ target }) => ({
      name: target.name,
      baseline: target.baseline,
      rps: [] as number[],
      p99: [] as number[],
      cpu: [] as number[],
      costs: [] as number[],
    }))
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, { target, server }] of started.entries()) {
        enter(target)
        const { result, cpuPerRequest } = await measure(server.url, ROUND_S)
        if (result.errors > 0 || result.non2xx > 0) {
          throw new Error(`${target.name}: ${result.errors} errors, ${result.non2xx} non-2xx`)
        }
        groupRows[i]!.rps.push(result.requests.average)
        groupRows[i]!.p99.push(result.latency.p99)
        groupRows[i]!.cpu.push(cpuPerRequest)
      }
      for (const row of groupRows) {
        const base = groupRows.find((other) => other.name === row.baseline)
        if (base) row.costs.push(row.cpu[round]! / base.cpu[round]!)
      }
    }
    for (const { server } of started) await server.close()
    rows.push(...groupRows)
  }

  console.log(
    `${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${ROUND_S} s after ${WARMUP_S} s warm-up; medians`,
  )
  console.log('| server | req/s | p99 ms | server CPU µs/req | CPU overhead vs bare (per round) |')
  console.log('|---|---:|---:|---:|---|')
  for (const row of rows) {
    const percent = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(0)} %`
    const overhead =
      row.costs.length === 0
        ? '—'
        : `**${percent(median(row.costs))}** (${row.costs.map(percent).join(', ')}) vs ${row.baseline}`
    console.log(
      `| ${row.name} | ${Math.round(median(row.rps))} | ${median(row.p99)} | ${median(row.cpu).toFixed(1)} | ${overhead} |`,
    )
  }
  console.log('\nWithout the network (real IncomingMessage / ServerResponse, no socket), median:')
  console.log('| write | ns per request |\n|---|---:|')
  console.log(`| node:http by hand | ${Math.round(conversion.bare)} |`)
  for (const [mode, ns] of [
    ['default: native objects', conversion.native],
    ['lightweight: true', conversion.lightweight],
  ] as const) {
    console.log(`| handleNodeRequest, ${mode} | ${Math.round(ns)} |`)
    console.log(`| conversion cost, ${mode} | **+${Math.round(ns - conversion.bare)} ns** |`)
  }
}
