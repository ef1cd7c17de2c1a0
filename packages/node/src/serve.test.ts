import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { Socket } from 'node:net'
import { connect } from 'node:net'
import type { Handler } from '@api-blocks/core'
import { afterEach, describe, expect, test } from 'vitest'
import { toNodeConnectListener } from './connect.ts'
import type { ServeOptions } from './serve.ts'
import { serve } from './serve.ts'

const servers: Server[] = []
const sockets: Socket[] = []
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy()
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    server.close()
  }
})

async function start(handler: Handler, options: ServeOptions = {}): Promise<number> {
  const server = serve(handler, { port: 0, hostname: '127.0.0.1', ...options })
  servers.push(server)
  await once(server, 'listening')
  return (server.address() as { port: number }).port
}

function open(port: number): Socket {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  sockets.push(socket)
  return socket
}

// Everything the server sends until it closes the connection, and how long that took.
async function untilClosed(socket: Socket): Promise<{ text: string; ms: number }> {
  const started = performance.now()
  let text = ''
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1')
  })
  // Not events.once: it rejects on 'error', and a reset (unread requests) is a close here.
  if (!socket.closed) await new Promise((resolve) => socket.once('close', resolve))
  return { text, ms: performance.now() - started }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test('serve() listens and answers with the handler', async () => {
  const port = await start(async (request) => Response.json({ method: request.method }), {
    server: { keepAliveTimeout: 1000 },
  })
  expect(servers[0]!.keepAliveTimeout).toBe(1000)
  const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'DELETE' })
  expect(await response.json()).toEqual({ method: 'DELETE' })
})

describe('serve(): defaults against clients that hold connections', () => {
  test('timeouts shorter than node:http’s own (60 s for headers, 300 s per request, no idle timeout)', async () => {
    await start(async () => new Response('ok'))
    const server = servers[0]!
    expect(server.headersTimeout).toBe(10_000)
    expect(server.requestTimeout).toBe(30_000)
    expect(server.keepAliveTimeout).toBe(5_000)
    expect(server.timeout).toBe(60_000)
  })

  test('maxConnections stays below the open-file limit, with room for store connections and files', async () => {
    await start(async () => new Response('ok'))
    const limit = Number(execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim())
    const { maxConnections } = servers[0]!
    expect(maxConnections).toBe(limit - Math.max(64, Math.ceil(limit / 10)))
  })

  test('every default can be set', async () => {
    await start(async () => new Response('ok'), {
      server: { headersTimeout: 2000, requestTimeout: 4000, keepAliveTimeout: 100 },
      idleTimeout: 0,
      maxConnections: 7,
    })
    const server = servers[0]!
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([
      2000, 4000, 100,
    ])
    expect([server.timeout, server.maxConnections]).toEqual([0, 7])
  })

  test.each([
    { idleTimeout: -1 },
    { idleTimeout: 1.5 },
    { maxConnections: 0 },
    { maxPipelinedRequests: Number.NaN },
  ])('a setting out of range throws: %o', (options) => {
    expect(() => serve(async () => new Response('ok'), { port: 0, ...options })).toThrow(TypeError)
  })

  // At the defaults (closed within 11 s): examples/service/test/sockets.test.ts. Here the same
  // mechanism, ten times faster.
  test('a client that trickles its header section gets 408 and is closed once headersTimeout passes', async () => {
    const port = await start(async () => new Response('ok'), {
      server: { headersTimeout: 1000, connectionsCheckingInterval: 100 },
    })
    const socket = open(port)
    await once(socket, 'connect')
    const request = 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: '
    let sent = 0
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write(request[sent++ % request.length]!)
    }, 100)
    try {
      const { text, ms } = await untilClosed(socket)
      expect(text.startsWith('HTTP/1.1 408 ')).toBe(true)
      expect(ms).toBeLessThan(5000) // node:http alone: 60 s
    } finally {
      clearInterval(trickle)
    }
  })

  test('idleTimeout closes a connection whose client stopped reading a streamed response', async () => {
    let aborted!: () => void
    const clientGone = new Promise<void>((resolve) => {
      aborted = resolve
    })
    const chunk = new Uint8Array(64 * 1024)
    const port = await start(
      async (request) => {
        request.signal.addEventListener('abort', () => aborted())
        return new Response(new ReadableStream({ pull: (controller) => controller.enqueue(chunk) }))
      },
      { idleTimeout: 300 },
    )
    const socket = open(port)
    socket.pause() // reads nothing: the server's writes stall once the buffers are full
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    await clientGone
  })
})

describe('serve(): a full server makes room', () => {
  test('with maxConnections open and idle, a new client is served at once: the longest idle gives way', async () => {
    const port = await start(async () => new Response('ok'), { maxConnections: 20 })
    const idle = Array.from({ length: 60 }, () => open(port).resume())
    await Promise.all(idle.map((socket) => once(socket, 'connect')))
    await sleep(50)
    const started = performance.now()
    const response = await fetch(`http://127.0.0.1:${port}/`)
    expect(await response.text()).toBe('ok')
    expect(performance.now() - started).toBeLessThan(1000)
    const count = await new Promise<number>((resolve, reject) =>
      servers[0]!.getConnections((error, n) => (error ? reject(error) : resolve(n))),
    )
    expect(count).toBeLessThanOrEqual(20)
    // The oldest went first.
    await new Promise((resolve) => (idle[0]!.closed ? resolve(0) : idle[0]!.once('close', resolve)))
  })

  test('a flood of connections that send nothing closes its own, not a keep-alive connection in use', async () => {
    const port = await start(async () => new Response('ok'), { maxConnections: 8 })
    const client = open(port)
    let text = ''
    client.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1')
    })
    client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    while (!text.endsWith('ok')) await once(client, 'data')
    // Idle for more than a second: old enough to give way, but only once no fresh one is left.
    await sleep(1100)
    const flood = Array.from({ length: 40 }, () => open(port).resume())
    await Promise.all(flood.map((socket) => once(socket, 'connect')))
    await sleep(100)
    expect(client.closed).toBe(false)
    text = ''
    client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    while (!text.endsWith('ok')) await once(client, 'data')
    expect(text.startsWith('HTTP/1.1 200 ')).toBe(true)
  })

  test('a connection with a request in flight is never the one that gives way', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const port = await start(
      async (request) => {
        if (new URL(request.url).pathname === '/slow') await held
        return new Response('done')
      },
      { maxConnections: 4 },
    )
    const busy = open(port)
    busy.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n')
    await sleep(50)
    const idle = Array.from({ length: 10 }, () => open(port))
    await Promise.all(idle.map((socket) => once(socket, 'connect')))
    await sleep(50)
    release()
    let text = ''
    busy.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1')
    })
    while (!text.endsWith('done')) await once(busy, 'data')
    expect(text.startsWith('HTTP/1.1 200 ')).toBe(true)
  })
})

describe('serve(): pipelining', () => {
  test('a client that pipelines past maxPipelinedRequests is closed, and the handler ran at most that often', async () => {
    let calls = 0
    const port = await start(async () => {
      calls++
      return new Response('x'.repeat(1024))
    })
    const socket = open(port)
    socket.pause()
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(200))
    socket.resume()
    await untilClosed(socket)
    expect(calls).toBeLessThanOrEqual(16)
  })

  test('requests within the cap are all answered, in order (RFC 9112 §9.3.2)', async () => {
    const port = await start(async (request) => new Response(new URL(request.url).pathname))
    const socket = open(port)
    const paths = Array.from({ length: 16 }, (_, i) => `/${i}`)
    socket.end(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''))
    const { text } = await untilClosed(socket)
    expect([...text.matchAll(/\r\n\r\n(\/\d+)/g)].map((match) => match[1])).toEqual(paths)
  })
})

describe('CONNECT', () => {
  test('MUST be answered, not dropped: the handler gets it as a Request and its answer is written before the close', async () => {
    let seen: unknown
    const port = await start(async (request) => {
      seen = { method: request.method, url: request.url, body: request.body }
      return Response.json({ error: 'no tunnels' }, { status: 405, headers: { allow: 'GET' } })
    })
    const socket = open(port)
    socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\ntunnel bytes')
    const { text } = await untilClosed(socket)
    expect(text.startsWith('HTTP/1.1 405 ')).toBe(true)
    expect(text).toMatch(/\r\nallow: GET\r\n/)
    expect(text).toMatch(/\r\nConnection: close\r\n/)
    expect(text.endsWith('{"error":"no tunnels"}')).toBe(true)
    expect(seen).toEqual({ method: 'CONNECT', url: 'http://example.com:443/', body: null })
  })

  test('a handler that throws answers its problem; toNodeConnectListener serves a server made by hand', async () => {
    const server = createServer().on(
      'connect',
      toNodeConnectListener(async () => {
        throw new Error('secret')
      }),
    )
    servers.push(server)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const socket = open((server.address() as { port: number }).port)
    socket.write('CONNECT [::1]:8080 HTTP/1.1\r\nHost: x\r\n\r\n')
    const { text } = await untilClosed(socket)
    expect(text.startsWith('HTTP/1.1 500 ')).toBe(true)
    expect(text).toContain('application/problem+json')
    expect(text).not.toContain('secret')
  })

  test('MUST NOT crash when pipelined behind a request still being answered: both are answered, in order', async () => {
    const port = await start(async (request) => {
      if (request.method === 'GET') await sleep(50)
      return new Response(`m=${request.method}`, { status: request.method === 'GET' ? 200 : 405 })
    })
    const socket = open(port)
    socket.end(
      'GET / HTTP/1.1\r\nHost: x\r\n\r\nCONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n',
    )
    const { text } = await untilClosed(socket)
    expect(text).toMatch(/^HTTP\/1\.1 200 [\s\S]*m=GETHTTP\/1\.1 405 [\s\S]*m=CONNECT$/)
  })

  test('MUST answer a CONNECT behind several requests still being answered, after all of them, in order', async () => {
    const port = await start(async (request) => {
      if (request.method === 'GET') await sleep(30)
      const path = new URL(request.url).pathname
      return new Response(`m=${request.method}${path}`, {
        status: request.method === 'GET' ? 200 : 405,
      })
    })
    const socket = open(port)
    socket.end(
      'GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\nCONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n',
    )
    const { text } = await untilClosed(socket)
    expect(text.match(/m=\S+?(?=HTTP|$)/g)).toEqual(['m=GET/a', 'm=GET/b', 'm=GET/c', 'm=CONNECT/'])
  })

  test('an authority that is not one answers 400', async () => {
    const port = await start(async () => new Response('never'))
    const socket = open(port)
    socket.write('CONNECT a/b@c HTTP/1.1\r\nHost: x\r\n\r\n')
    const { text } = await untilClosed(socket)
    expect(text.startsWith('HTTP/1.1 400 ')).toBe(true)
  })
})
