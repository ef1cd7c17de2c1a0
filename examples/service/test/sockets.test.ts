// The service as `npm start` runs it (src/main.ts in a process of its own), on raw sockets:
// clients that hold connections without using them, pipelining, and the methods node:http
// treats apart (CONNECT, TRACE).
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { Socket } from 'node:net'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, test } from 'vitest'
import { clientCredentialsToken } from './oauth-client.ts'

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const children: ChildProcess[] = []
const sockets: Socket[] = []
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy()
  for (const child of children.splice(0)) child.kill()
})

/**
 * Starts the service on a free port; `openFiles` runs it under that descriptor limit (the
 * shell's `ulimit -n`, which node keeps).
 */
async function start(env: Record<string, string> = {}, openFiles?: number): Promise<number> {
  const node = [process.execPath, '--conditions=@api-blocks/source', main]
  const child =
    openFiles === undefined
      ? spawn(node[0]!, node.slice(1), { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('/bin/sh', ['-c', `ulimit -n ${openFiles} && exec "$@"`, 'sh', ...node], {
          env: childEnv(env),
          stdio: ['ignore', 'pipe', 'pipe'],
        })
  children.push(child)
  let stdout = ''
  child.stderr!.resume()
  for (;;) {
    const [chunk] = (await once(child.stdout!, 'data')) as [Buffer]
    stdout += chunk
    const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout)
    if (match) {
      child.stdout!.resume()
      return Number(match[1])
    }
  }
}

function childEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env['PATH'] ?? '', PORT: '0', LOG_LEVEL: 'silent', ...env }
}

function open(port: number): Socket {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  sockets.push(socket)
  return socket
}

// What the service sends until it closes the connection, and how long that took.
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

function header(text: string, name: string): string | undefined {
  return new RegExp(`\r\n${name}: ([^\r]*)\r\n`, 'i').exec(text)?.[1]
}

describe('CONNECT and TRACE', () => {
  test('CONNECT MUST be answered 405 with Allow and X-Request-Id (RFC 9110 §9.3.6, §15.5.6), then the connection is closed', async () => {
    const port = await start()
    const socket = open(port)
    socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    const { text } = await untilClosed(socket)
    expect(text.startsWith('HTTP/1.1 405 ')).toBe(true)
    expect(header(text, 'allow')).toBe('GET, HEAD, OPTIONS')
    expect(header(text, 'x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(header(text, 'content-type')).toBe('application/problem+json')
  })

  test('TRACE MUST be answered 405 with Allow and X-Request-Id, like any method the resource lacks', async () => {
    const port = await start()
    // With a token: /v1 answers 401 to anything without one, TRACE included.
    const token = await clientCredentialsToken(fetch, `http://127.0.0.1:${port}`)
    const socket = open(port)
    socket.end(
      `TRACE /v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Request-Id: trace-1\r\n\r\n`,
    )
    const { text } = await untilClosed(socket)
    expect(text.startsWith('HTTP/1.1 405 ')).toBe(true)
    expect(header(text, 'allow')).toBe('GET, HEAD, POST, OPTIONS')
    expect(header(text, 'x-request-id')).toBe('trace-1')
  })

  test('TRACE and CONNECT with a coded entity tag are still 405, never a 500 (RFC 9110 §13.2.1: no preconditions)', async () => {
    const port = await start()
    const token = await clientCredentialsToken(fetch, `http://127.0.0.1:${port}`)
    const trace = open(port)
    trace.end(
      `TRACE /v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nIf-Match: "a%-gzip"\r\n\r\n`,
    )
    expect((await untilClosed(trace)).text.startsWith('HTTP/1.1 405 ')).toBe(true)
    const tunnel = open(port)
    tunnel.end(
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nIf-None-Match: "a%-gzip"\r\n\r\n',
    )
    expect((await untilClosed(tunnel)).text.startsWith('HTTP/1.1 405 ')).toBe(true)
  })
})

describe('clients that hold connections', () => {
  test('at the defaults, a client that trickles its header section one byte a second is closed within 15 s', async () => {
    const port = await start()
    const socket = open(port)
    await once(socket, 'connect')
    const request = 'GET /v1/orders HTTP/1.1\r\nHost: x\r\nX-Slow: '
    let sent = 0
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write(request[sent++ % request.length]!)
    }, 1000)
    try {
      const { text, ms } = await untilClosed(socket)
      expect(text.startsWith('HTTP/1.1 408 ')).toBe(true)
      expect(ms).toBeLessThan(15_000)
    } finally {
      clearInterval(trickle)
    }
  }, 20_000)

  test('HEADERS_TIMEOUT_MS and CONNECTIONS_CHECK_INTERVAL_MS set how soon', async () => {
    const port = await start({ HEADERS_TIMEOUT_MS: '500', CONNECTIONS_CHECK_INTERVAL_MS: '100' })
    const socket = open(port)
    await once(socket, 'connect')
    socket.write('GET /v1/orders HTTP/1.1\r\n')
    const { text, ms } = await untilClosed(socket)
    expect(text.startsWith('HTTP/1.1 408 ')).toBe(true)
    expect(ms).toBeLessThan(3000)
  })

  test('beside 10,000 idle sockets, more than the service has descriptors for, a new client is served at once, not locked out', async () => {
    // At this machine's limit (`ulimit -n`), 20,000 idle sockets locked every client out for
    // about 75 s; here the service gets 4096 descriptors, so 10,000 are more than it can hold.
    const port = await start({}, 4096)
    const idle = Array.from({ length: 10_000 }, () => open(port))
    await Promise.all(
      idle.map(
        (socket) =>
          new Promise<void>((resolve) => {
            socket.once('connect', resolve).once('close', () => resolve())
          }),
      ),
    )
    const socket = open(port)
    const started = performance.now()
    socket.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    const { text } = await untilClosed(socket)
    expect(text.startsWith('HTTP/1.1 200 ')).toBe(true)
    // Locked out, a client waited about 75 s; served, it waits well under a second on a quiet
    // machine. The bound sits between the two with room for a loaded CI machine (it once took
    // just over 1 s there), so it tells the two apart without timing the server.
    expect(performance.now() - started).toBeLessThan(10_000)
  }, 30_000)

  test('a client that pipelines 2000 requests gets at most MAX_PIPELINED_REQUESTS answers, then the connection is closed', async () => {
    const port = await start({ MAX_PIPELINED_REQUESTS: '8' })
    const socket = open(port)
    socket.write('GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(2000))
    const { text } = await untilClosed(socket)
    // (A reset may discard answers the client had not read yet: none is a pass as well.)
    expect((text.match(/HTTP\/1\.1 \d{3} /g) ?? []).length).toBeLessThanOrEqual(8)
  })

  test('a setting out of range stops the start with a clear message', async () => {
    const child = spawn(process.execPath, ['--conditions=@api-blocks/source', main], {
      env: childEnv({ MAX_CONNECTIONS: 'many' }),
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    children.push(child)
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk
    })
    const [code] = (await once(child, 'exit')) as [number]
    expect(code).toBe(1)
    expect(stderr).toMatch(/^Invalid configuration: MAX_CONNECTIONS must be a whole number/)
  })
})
