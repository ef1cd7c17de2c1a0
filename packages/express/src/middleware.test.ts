// The middleware form with the real blocks of this repository in front of plain Express routes.
import { once } from 'node:events'
import { Agent, request as httpRequest } from 'node:http'
import { Readable } from 'node:stream'
import type { Middleware } from '@api-blocks/core'
import { clientAddressOf } from '@api-blocks/core'
import { compress, requestId } from '@api-blocks/http'
import { idempotency, MemoryIdempotencyStore } from '@api-blocks/idempotency'
import { NodeAdapterError, restoreNativeGlobals } from '@api-blocks/node'
import { MemoryRateLimitStore, rateLimit } from '@api-blocks/rate-limit'
import express from 'express'
import { afterEach, describe, expect, test } from 'vitest'
import type { Listening } from '../test/start.ts'
import { listen } from '../test/start.ts'
import { toExpressMiddleware } from './middleware.ts'

let running: Listening | undefined
afterEach(async () => {
  await running?.close()
  running = undefined
  restoreNativeGlobals()
})

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  })

describe('toExpressMiddleware: requestId() in front of Express routes', () => {
  test("the block's header reaches Express's own answers, routes and 404s alike", async () => {
    const app = express()
      .use(toExpressMiddleware(requestId({ generate: () => 'generated-id' })))
      .get('/hello', (_req, res) => {
        res.status(202).json({ hello: 'world' })
      })
    running = await listen(app)
    const hello = await fetch(`${running.url}/hello`, { headers: { 'x-request-id': 'abc-123' } })
    expect(hello.status).toBe(202)
    expect(hello.headers.get('x-request-id')).toBe('abc-123')
    expect(hello.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await hello.json()).toEqual({ hello: 'world' })
    const missing = await fetch(`${running.url}/nowhere`)
    expect(missing.status).toBe(404)
    expect(missing.headers.get('x-request-id')).toBe('generated-id')
    expect(await missing.text()).toContain('Cannot GET /nowhere')
  })

  test('HEAD, 204 and 304 from Express keep their header sections and send no body', async () => {
    const app = express()
      .use(toExpressMiddleware(requestId({ generate: () => 'id' })))
      .get('/text', (_req, res) => {
        res.send('twelve bytes')
      })
      .delete('/gone', (_req, res) => {
        res.sendStatus(204)
      })
    running = await listen(app)
    const head = await fetch(`${running.url}/text`, { method: 'HEAD' })
    expect([head.status, head.headers.get('content-length'), await head.text()]).toEqual([
      200,
      '12',
      '',
    ])
    const gone = await fetch(`${running.url}/gone`, { method: 'DELETE' })
    expect([gone.status, gone.headers.get('x-request-id'), await gone.text()]).toEqual([
      204,
      'id',
      '',
    ])
    const first = await fetch(`${running.url}/text`)
    const etag = first.headers.get('etag')!
    await first.text()
    // fetch would add `cache-control: no-cache` (which makes Express answer 200) unless set.
    const cached = await fetch(`${running.url}/text`, {
      headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' },
    })
    expect([cached.status, cached.headers.get('x-request-id'), await cached.text()]).toEqual([
      304,
      'id',
      '',
    ])
  })
})

describe('toExpressMiddleware: rateLimit() in front of Express routes', () => {
  test('MUST add its fields to what Express answers, and answer 429 itself past the quota', async () => {
    let served = 0
    const limit = rateLimit({
      store: new MemoryRateLimitStore(),
      policies: [{ name: 'tests', quota: 2, windowSeconds: 60 }],
      key: (request) => clientAddressOf(request),
      onStoreError: 'fail-open',
    })
    const app = express()
      .use(toExpressMiddleware(limit))
      .get('/orders', (_req, res) => {
        served++
        res.set('cache-control', 'no-store').json({ orders: [] })
      })
    running = await listen(app)
    for (const remaining of ['1', '0']) {
      const response = await fetch(`${running.url}/orders`)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ orders: [] })
      expect(response.headers.get('ratelimit-remaining')).toBe(remaining)
      expect(response.headers.get('cache-control')).toBe('no-store')
    }
    const refused = await fetch(`${running.url}/orders`)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.headers.get('retry-after')).not.toBeNull()
    await refused.text()
    expect(served).toBe(2)
  })
})

describe.each([false, true])(
  'toExpressMiddleware: idempotency() before express.json() (lightweight: %s)',
  (lightweight) => {
    test('the route parses the body the block read, and a retry replays what it sent', async () => {
      const seen: unknown[] = []
      const app = express()
        .use(
          toExpressMiddleware(
            idempotency({ store: new MemoryIdempotencyStore(), scope: 'tests' }),
            { lightweight },
          ),
        )
        .use(express.json())
        .post('/orders', (req, res) => {
          seen.push(req.body)
          res
            .status(201)
            .set('location', `/orders/${seen.length}`)
            .json({ id: seen.length, order: req.body })
        })
      running = await listen(app)
      const body = '{"sku":"BOOK-042","quantity":2}'
      const first = await post(`${running.url}/orders`, body, { 'idempotency-key': 'k1' })
      expect(first.status).toBe(201)
      const created = await first.json()
      expect(created).toEqual({ id: 1, order: { sku: 'BOOK-042', quantity: 2 } })
      expect(seen).toEqual([{ sku: 'BOOK-042', quantity: 2 }])

      const replay = await post(`${running.url}/orders`, body, { 'idempotency-key': 'k1' })
      expect(replay.status).toBe(201)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.headers.get('location')).toBe('/orders/1')
      expect(await replay.json()).toEqual(created)
      expect(seen).toHaveLength(1)

      const reused = await post(`${running.url}/orders`, '{"sku":"OTHER"}', {
        'idempotency-key': 'k1',
      })
      expect(reused.status).toBe(409)
      await reused.text()
      // Without a key the block passes the body through untouched, read by Express alone.
      const plain = await post(`${running.url}/orders`, '{"plain":true}')
      expect(plain.status).toBe(201)
      expect(seen).toEqual([{ sku: 'BOOK-042', quantity: 2 }, { plain: true }])
    })
  },
)

describe('toExpressMiddleware: the request body for the later handlers', () => {
  test('the bytes of the request the block hands on are what Express reads; Content-Length follows', async () => {
    const shout: Middleware = async (request, next) => {
      const text = await request.text()
      return next(new Request(request, { body: text.toUpperCase().repeat(2) }))
    }
    const app = express()
      .use(toExpressMiddleware(shout))
      .use(express.text({ type: '*/*' }))
      .post('/echo', (req, res) => {
        res.json({ body: req.body, length: req.headers['content-length'] })
      })
    running = await listen(app)
    const response = await fetch(`${running.url}/echo`, { method: 'POST', body: 'hey' })
    expect(await response.json()).toEqual({ body: 'HEYHEY', length: '6' })
  })

  test('a body the block consumed without handing it on is gone for Express (req.body stays unset)', async () => {
    const swallow: Middleware = async (request, next) => {
      await request.arrayBuffer()
      return next(request)
    }
    const app = express()
      .use(toExpressMiddleware(swallow))
      .use(express.json())
      .post('/json', (req, res) => {
        res.json({ body: req.body ?? 'unset' })
      })
    running = await listen(app)
    expect(await (await post(`${running.url}/json`, '{"a":1}')).json()).toEqual({ body: 'unset' })
  })

  test('a body the block never touched streams from the socket to Express', async () => {
    const pass: Middleware = (request, next) => next(request)
    const app = express()
      .use(toExpressMiddleware(pass))
      .use(express.json())
      .post('/json', (req, res) => {
        res.json(req.body)
      })
    running = await listen(app)
    expect(await (await post(`${running.url}/json`, '{"a":1}')).json()).toEqual({ a: 1 })
  })

  test('bytes put back that no handler reads are dropped; the connection serves the next request', async () => {
    const readsBody: Middleware = async (request, next) =>
      next(new Request(request, { body: await request.bytes() }))
    const ended: Promise<unknown>[] = []
    const app = express()
      .use(toExpressMiddleware(readsBody))
      .post('/ignore', (req, res) => {
        // Once the answer is out, the request ends: the bytes nobody read were dropped.
        ended.push(once(req, 'end'))
        res.send('ignored the body')
      })
    running = await listen(app)
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const send = () =>
      new Promise<{ text: string; port: number }>((resolve, reject) => {
        const client = httpRequest(`${running!.url}/ignore`, { method: 'POST', agent }, (res) => {
          let text = ''
          res.on('data', (chunk) => {
            text += chunk
          })
          res.on('end', () => resolve({ text, port: client.socket!.localPort! }))
        })
        client.on('error', reject)
        client.end('{"some":"body"}')
      })
    const first = await send()
    const second = await send()
    agent.destroy()
    expect([first.text, second.text]).toEqual(['ignored the body', 'ignored the body'])
    expect(second.port).toBe(first.port)
    await Promise.all(ended)
    expect(ended).toHaveLength(2)
  })

  test('the block reading the body after it called next fails with REQUEST_BODY_CONSUMED', async () => {
    let late: unknown
    const reader: Middleware = async (request, next) => {
      const response = await next(request)
      late = await request.text().catch((error: unknown) => error)
      return response
    }
    const app = express()
      .use(toExpressMiddleware(reader))
      .post('/', (_req, res) => {
        res.send('ok')
      })
    running = await listen(app)
    expect(await (await fetch(running.url, { method: 'POST', body: 'x' })).text()).toBe('ok')
    expect(late).toBeInstanceOf(NodeAdapterError)
    expect((late as NodeAdapterError).code).toBe('REQUEST_BODY_CONSUMED')
  })
})

describe("toExpressMiddleware: the downstream's body, streamed", () => {
  test('chunks reach the client as Express writes them, through the block', async () => {
    let release!: () => void
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    const app = express()
      .use(toExpressMiddleware(requestId({ generate: () => 'streamed' })))
      .get('/events', async (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write('data: first\n\n')
        await released
        res.end('data: last\n\n')
      })
    running = await listen(app)
    const response = await fetch(`${running.url}/events`)
    expect(response.headers.get('x-request-id')).toBe('streamed')
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    // The route is still waiting: an adapter that buffered would never deliver this.
    expect(decoder.decode((await reader.read()).value)).toBe('data: first\n\n')
    release()
    let rest = ''
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      rest += decoder.decode(next.value)
    }
    expect(rest).toBe('data: last\n\n')
  })

  test('backpressure: a client that stops reading stops a piped stream', async () => {
    let produced = 0
    const total = 256 * 1024 * 1024
    const app = express()
      .use(toExpressMiddleware(requestId()))
      .get('/large', (_req, res) => {
        const chunk = Buffer.alloc(64 * 1024, 1)
        Readable.from(
          (function* () {
            while (produced < total) {
              produced += chunk.byteLength
              yield chunk
            }
          })(),
        ).pipe(res)
      })
    running = await listen(app)
    const client = httpRequest(`${running.url}/large`, { agent: false })
    client.end()
    const [response] = (await once(client, 'response')) as [import('node:http').IncomingMessage]
    await once(response, 'data')
    response.pause()
    let last = -1
    while (produced !== last) {
      last = produced
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(produced).toBeLessThan(total / 8)
    client.destroy()
  })

  test('compress() reads what Express sent and answers it compressed', async () => {
    const text = 'compressible '.repeat(500)
    const app = express()
      .use(toExpressMiddleware(compress({ threshold: 256 })))
      .get('/text', (_req, res) => {
        res.type('text/plain').send(text)
      })
    running = await listen(app)
    const response = await fetch(`${running.url}/text`, { headers: { 'accept-encoding': 'gzip' } })
    expect(response.headers.get('content-encoding')).toBe('gzip')
    expect(await response.text()).toBe(text)
  })
})

describe('toExpressMiddleware: answers and errors of the block itself', () => {
  test('a block that answers itself keeps headers set earlier, and Express routes do not run', async () => {
    let routed = false
    const closed: Middleware = async () =>
      Response.json({ closed: true }, { status: 503, headers: { 'retry-after': '60' } })
    const app = express()
      .use((_req, res, next) => {
        res.setHeader('x-frame-options', 'DENY')
        next()
      })
      .use(toExpressMiddleware(closed))
      .get('/', (_req, res) => {
        routed = true
        res.send('never')
      })
    running = await listen(app)
    const response = await fetch(running.url)
    expect(response.status).toBe(503)
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    expect(response.headers.get('retry-after')).toBe('60')
    expect(await response.json()).toEqual({ closed: true })
    expect(routed).toBe(false)
  })

  test('a block that throws answers a 500 problem, reported to onError', async () => {
    const errors: unknown[] = []
    const broken: Middleware = async () => {
      throw new Error('secret detail')
    }
    const app = express()
      .use(toExpressMiddleware(broken, { onError: (error) => errors.push(error) }))
      .get('/', (_req, res) => {
        res.send('never')
      })
    running = await listen(app)
    const response = await fetch(running.url)
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.text()).not.toContain('secret')
    expect((errors[0] as Error).message).toBe('secret detail')
  })

  test('a block that replaces what Express sent: exactly its answer goes out', async () => {
    const replace: Middleware = async (request, next) => {
      const downstream = await next(request)
      const text = await downstream.text()
      return new Response(`wrapped(${text})`, { status: 200, headers: { 'x-wrapped': 'yes' } })
    }
    const app = express()
      .use(toExpressMiddleware(replace))
      .get('/', (_req, res) => {
        res.status(201).set('x-route', 'set').send('inner')
      })
    running = await listen(app)
    const response = await fetch(running.url)
    expect(response.status).toBe(200)
    expect(response.headers.get('x-route')).toBeNull()
    expect(response.headers.get('x-wrapped')).toBe('yes')
    expect(await response.text()).toBe('wrapped(inner)')
  })

  test('an answer node:http refuses after the downstream ran is a 500 problem, not a cut connection', async () => {
    const errors: unknown[] = []
    const odd: Middleware = async (request, next) => {
      const downstream = await next(request)
      const headers = new Headers(downstream.headers)
      headers.set('x-odd', 'a\u0001b') // valid for Fetch, not for node:http
      return new Response(await downstream.text(), { headers })
    }
    const app = express()
      .use(toExpressMiddleware(odd, { onError: (error) => errors.push(error) }))
      .get('/', (_req, res) => {
        res.send('inner')
      })
    running = await listen(app)
    const response = await fetch(running.url)
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect((errors[0] as { code: string }).code).toBe('ERR_INVALID_CHAR')
  })

  test("the block's next runs Express once; a second call rejects", async () => {
    let second: unknown
    const twice: Middleware = async (request, next) => {
      const response = await next(request)
      second = await next(request).catch((error: unknown) => error)
      return response
    }
    const app = express()
      .use(toExpressMiddleware(twice))
      .get('/', (_req, res) => {
        res.send('once')
      })
    running = await listen(app)
    expect(await (await fetch(running.url)).text()).toBe('once')
    expect(second).toBeInstanceOf(TypeError)
  })

  test('the Request the block sees carries the client address and the URL the client sent', async () => {
    let seen: { address: string | undefined; url: string } | undefined
    const look: Middleware = async (request, next) => {
      seen = { address: clientAddressOf(request), url: request.url }
      return next(request)
    }
    const app = express()
    app.use('/v1', toExpressMiddleware(look))
    app.get('/v1/x', (_req, res) => {
      res.send('ok')
    })
    running = await listen(app)
    await (await fetch(`${running.url}/v1/x?y=1`)).text()
    expect(seen).toEqual({ address: '127.0.0.1', url: `${running.url}/v1/x?y=1` })
  })
})
