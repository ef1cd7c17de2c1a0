// The service's logs (src/log.ts): a client's 4xx is one info line without a stack; a 5xx and a
// store failure are logged at error with the error and the request id. Real pino writing to a
// collected stream; the failing stores are the real Redis stores on a client that is not
// connected (what a Redis outage looks like to them).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { RedisIdempotencyStore, RedisRateLimitStore } from '@api-blocks/redis'
import { createClient } from 'redis'
import { describe, expect, test } from 'vitest'
import type { ServiceOptions } from '../src/app.ts'
import { createService } from '../src/app.ts'
import type { LogLevel } from '../src/log.ts'
import { createLogger, ERROR_REPORT_INTERVAL_MS } from '../src/log.ts'
import { MemoryOrderStore } from '../src/orders/store.ts'
import { clientCredentialsToken } from './oauth-client.ts'

interface Line {
  level: number
  msg: string
  reqId?: string
  status?: number
  err?: { message: string; stack?: string }
  [field: string]: unknown
}

const INFO = 30
const WARN = 40
const ERROR = 50
const order = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }

function logged(options: ServiceOptions = {}, level: LogLevel = 'info') {
  const lines: Line[] = []
  const logger = createLogger({
    level,
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Line) },
  })
  const inner = createService({
    rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
    clientAddress: () => '192.0.2.1',
    ...options,
    logger,
  })
  // Every /v1 route needs a token: got on the first call, and what its request logged dropped,
  // so each test sees the lines of its own requests only.
  let token: Promise<string> | undefined
  const service = async (request: Request): Promise<Response> => {
    if (token === undefined) {
      token = clientCredentialsToken(inner, 'http://service.test')
      await token
      lines.splice(0)
    }
    if (!request.headers.has('authorization')) {
      request.headers.set('authorization', `Bearer ${await token}`)
    }
    return inner(request)
  }
  return { lines, service }
}

// Node-redis before connect(): every command rejects, as in an outage.
const disconnected = () => createClient({ url: 'redis://127.0.0.1:1' })

describe('a client’s 4xx', () => {
  test.each([
    ['GET', '/v1/orders?limit=abc', 400], // thrown by the pagination block
    ['GET', '/v1/orders/ord_999999', 404],
    ['POST', '/v1/orders', 422], // thrown by readJson
  ])(
    '%s %s (%i) is one info line, with the request id and no stack',
    async (method, path, status) => {
      const { lines, service } = logged()
      const response = await service(
        new Request(`http://service.test${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          ...(method === 'POST' ? { body: '{"items":[]}' } : {}),
        }),
      )
      expect(response.status).toBe(status)
      expect(lines).toEqual([
        {
          level: INFO,
          time: expect.any(Number),
          pid: process.pid,
          hostname: expect.any(String),
          msg: 'answered',
          reqId: response.headers.get('x-request-id'),
          method,
          path: path.split('?')[0],
          status,
          ms: expect.any(Number),
        },
      ])
    },
  )

  test('a 2xx is logged at debug only', async () => {
    const quiet = logged()
    expect((await quiet.service(new Request('http://service.test/v1/orders'))).status).toBe(200)
    expect(quiet.lines).toEqual([])
    const verbose = logged({}, 'debug')
    await verbose.service(new Request('http://service.test/v1/orders'))
    expect(verbose.lines.map((line) => [line.level, line.status])).toEqual([[20, 200]])
  })
})

describe('5xx and store failures', () => {
  test('a 5xx: the error at error with its stack and the request id, the answer at warn', async () => {
    // An order store whose create fails with an error that is no problem: a 500.
    class BrokenStore extends MemoryOrderStore {
      override async create(): Promise<never> {
        throw new Error('the disk is full')
      }
    }
    const { lines, service } = logged({ orderStore: new BrokenStore() })
    const response = await service(
      new Request('http://service.test/v1/orders', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
        body: JSON.stringify(order),
      }),
    )
    expect(response.status).toBe(500)
    const reqId = response.headers.get('x-request-id')
    const failure = lines.find((line) => line.level === ERROR)
    expect(failure).toMatchObject({ msg: 'request failed', reqId })
    expect(failure?.err?.stack).toContain('Error: the disk is full')
    expect(lines.find((line) => line.msg === 'answered')).toMatchObject({
      level: WARN,
      status: 500,
      reqId,
    })
  })

  test('a GraphQL resolver that fails: masked to the client as INTERNAL_SERVER_ERROR, logged at error with the request id', async () => {
    class BrokenStore extends MemoryOrderStore {
      override async get(): Promise<never> {
        throw new Error('the disk is full')
      }
    }
    const { lines, service } = logged({ orderStore: new BrokenStore() }, 'debug')
    const response = await service(
      new Request('http://service.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { clientId } order(id: "ord_1") { id } }' }),
      }),
    )
    // A partial result: the viewer, and the order's error without what failed.
    expect(response.status).toBe(200)
    const body = (await response.json()) as {
      data: unknown
      errors: { message: string; path: string[]; extensions: { code: string } }[]
    }
    expect(body.data).toEqual({ viewer: { clientId: 'demo-backend' }, order: null })
    expect(body.errors).toMatchObject([
      { path: ['order'], extensions: { code: 'INTERNAL_SERVER_ERROR' } },
    ])
    expect(JSON.stringify(body)).not.toContain('disk')
    const reqId = response.headers.get('x-request-id')
    const failure = lines.find((line) => line.level === ERROR)
    expect(failure).toMatchObject({ msg: 'request failed', reqId })
    expect(failure?.err?.stack).toContain('Error: the disk is full')
    expect(lines.find((line) => line.msg === 'graphql operation')).toMatchObject({
      level: 20,
      reqId,
      graphql: { transport: 'http', operation: 'query', cost: 1 },
    })
  })

  test('a GraphQL refusal answered 200 is logged at info with its code', async () => {
    const { lines, service } = logged()
    const response = await service(
      new Request('http://service.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ ${'a: __typename '.repeat(31)}}` }),
      }),
    )
    // application/json (no Accept): a GraphQL result, HTTP 200, which the request log keeps at debug.
    expect(response.status).toBe(200)
    await response.arrayBuffer()
    expect(lines).toEqual([
      expect.objectContaining({
        level: INFO,
        msg: 'graphql rejected',
        reqId: response.headers.get('x-request-id'),
        graphql: { transport: 'http', code: 'ALIAS_LIMIT_EXCEEDED' },
      }),
    ])
  })

  test('a rate-limit store that fails: the request passes (fail-open), the failure is logged at error with the request id', async () => {
    let now = 0
    const { lines, service } = logged({
      rateLimitStore: new RedisRateLimitStore({ client: disconnected() }),
      clock: () => now,
    })
    const first = await service(new Request('http://service.test/v1/orders'))
    expect(first.status).toBe(200)
    expect(lines).toEqual([
      expect.objectContaining({
        level: ERROR,
        msg: 'rate-limit store failed',
        reqId: first.headers.get('x-request-id'),
        store: 'rate-limit',
        action: 'fail-open',
        suppressed: 0,
        err: expect.objectContaining({ message: expect.any(String) }),
      }),
    ])
    // In an outage every request fails alike: one line an interval, counting the others.
    await service(new Request('http://service.test/v1/orders'))
    await service(new Request('http://service.test/v1/orders'))
    expect(lines).toHaveLength(1)
    now += ERROR_REPORT_INTERVAL_MS
    await service(new Request('http://service.test/v1/orders'))
    expect(lines.map((line) => line['suppressed'])).toEqual([0, 2])
  })

  test('an idempotency store that fails: 503, logged at error with the request id and the operation', async () => {
    const { lines, service } = logged({
      idempotencyStore: new RedisIdempotencyStore({ client: disconnected() }),
    })
    const response = await service(
      new Request('http://service.test/v1/orders', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
        body: JSON.stringify(order),
      }),
    )
    expect(response.status).toBe(503)
    const reqId = response.headers.get('x-request-id')
    expect(lines.find((line) => line.level === ERROR)).toMatchObject({
      msg: 'idempotency store failed',
      reqId,
      operation: 'claim',
      err: expect.objectContaining({ message: expect.any(String) }),
    })
    expect(lines.find((line) => line.msg === 'answered')).toMatchObject({
      level: WARN,
      status: 503,
    })
  })

  test('idempotency events are logged at debug, with the request id', async () => {
    const { lines, service } = logged({}, 'debug')
    const response = await service(
      new Request('http://service.test/v1/orders', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
        body: JSON.stringify(order),
      }),
    )
    expect(response.status).toBe(201)
    const reqId = response.headers.get('x-request-id')
    expect(lines.filter((line) => line.msg.startsWith('idempotency '))).toEqual([
      expect.objectContaining({ level: 20, msg: 'idempotency executed', reqId }),
      expect.objectContaining({ level: 20, msg: 'idempotency stored', reqId, status: 201 }),
    ])
  })
})

test('an error is logged without what it quotes of stored data (PostgreSQL detail, where, hint), aggregated errors included; a thrown object is copied, not changed', () => {
  const lines: Line[] = []
  const logger = createLogger({
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Line) },
  })
  const database = Object.assign(new Error('duplicate key value violates unique constraint'), {
    code: '23505',
    detail: 'Failing row contains (ord_1, Ada Lovelace, 1 Main St).',
    where: 'SQL statement "INSERT INTO orders …"',
    hint: 'Ada Lovelace',
  })
  logger.error({ err: database }, 'request failed')
  logger.error({ err: new Error('create failed', { cause: database }) }, 'request failed')
  logger.error({ err: new AggregateError([database], 'both failed') }, 'request failed')
  const thrown = { detail: 'Ada Lovelace' }
  logger.error({ err: thrown }, 'request failed')
  expect(thrown.detail).toBe('Ada Lovelace')
  const text = JSON.stringify(lines)
  expect(lines).toHaveLength(4)
  expect(lines[0]?.err).toMatchObject({ code: '23505' })
  expect(text).toContain('duplicate key value')
  expect(text).not.toContain('Ada Lovelace')
  expect(text).not.toContain('INSERT INTO')
})

test('pretty lines for a terminal', async () => {
  let text = ''
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString()
      done()
    },
  })
  const logger = createLogger({ pretty: true, destination })
  logger.info({ status: 404 }, 'answered')
  await new Promise((resolve) => setImmediate(resolve))
  expect(text).toContain('answered')
  expect(text).toMatch(/status\S*: 404/)
  expect(() => JSON.parse(text)).toThrow()
})

describe('npm start', () => {
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url))

  function start(env: Record<string, string>) {
    const child = spawn(process.execPath, ['--conditions=@api-blocks/source', main], {
      env: { PATH: process.env['PATH'] ?? '', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk
    })
    return { child, stdout: () => stdout, stderr: () => stderr }
  }

  test('logs JSON lines on stdout when it is not a terminal; LOG_LEVEL sets the level', async () => {
    const service = start({ LOG_LEVEL: 'info' })
    try {
      while (!/listening on http:\/\/127\.0\.0\.1:\d+/.test(service.stdout())) {
        await once(service.child.stdout, 'data')
      }
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(service.stdout())![1]
      const token = await clientCredentialsToken(fetch, `http://127.0.0.1:${port}`)
      const headers = { authorization: `Bearer ${token}` }
      const reqId = await new Promise<string>((resolve, reject) =>
        httpRequest({ port, host: '127.0.0.1', path: '/v1/orders/ord_999999', headers }, (res) => {
          res.resume()
          resolve(String(res.headers['x-request-id']))
        })
          .on('error', reject)
          .end(),
      )
      while (!service.stdout().includes(reqId)) await once(service.child.stdout, 'data')
      const line = service
        .stdout()
        .split('\n')
        .find((text) => text.includes(reqId))!
      expect(JSON.parse(line)).toMatchObject({ level: INFO, reqId, status: 404 })
      expect(service.stderr()).toBe('')
    } finally {
      service.child.kill()
    }
  })

  test('an unknown LOG_LEVEL stops the start with a clear message', async () => {
    const service = start({ LOG_LEVEL: 'loud' })
    try {
      const [code] = (await once(service.child, 'exit')) as [number]
      expect(code).toBe(1)
      expect(service.stderr()).toMatch(/^Invalid configuration: LOG_LEVEL must be one of fatal, /)
    } finally {
      service.child.kill()
    }
  })
})
