// Receivers on loopback for the worker's tests: one node:http server whose path picks the answer
// (docs/spec.md §3.1's outcomes), and which records every request it gets (headers and body).
import { once } from 'node:events'
import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface ReceivedRequest {
  path: string
  headers: IncomingHttpHeaders
  body: string
}

export type Answer =
  | 'ok'
  | 'bad'
  | 'gone'
  | 'busy'
  | 'busy-long'
  | 'busy-no-retry-after'
  | 'error'
  | 'hang'
  | 'reset'
  | 'redirect'
  | 'slow'

export interface Receivers {
  /** `http://127.0.0.1:<port>`: the origin to allow in the SSRF guard. */
  readonly origin: string
  /** The URL of a receiver answering `answer`. */
  url(answer: Answer | string): string
  /** Requests received, oldest first. */
  readonly received: ReceivedRequest[]
  /** Requests being answered now by the `slow` receivers, and the most at once so far. */
  readonly load: { now: number; max: number }
  /** `path` answers these, one per request, then 200 (`/script/…` paths). */
  script(path: string, answers: readonly Answer[]): void
  /** From now on, `path` answers 200 (the receiver recovered). */
  recover(path: string): void
  close(): Promise<void>
}

/** 2 KiB of body: more than the attempt log keeps. */
export const LONG_BODY: string = `internal error: ${'x'.repeat(2048)}`

function answer(
  kind: string,
  response: ServerResponse,
  socket: Socket,
  load: { now: number; max: number },
): void {
  switch (kind) {
    case 'slow':
      load.now++
      load.max = Math.max(load.max, load.now)
      setTimeout(() => {
        load.now--
        response.writeHead(200).end('took a while')
      }, 30)
      return
    case 'ok':
      response.writeHead(200, { 'content-type': 'text/plain' }).end('thanks')
      return
    case 'bad':
      response.writeHead(400, { 'content-type': 'text/plain' }).end('bad request')
      return
    case 'gone':
      response.writeHead(410).end()
      return
    case 'busy':
      response.writeHead(429, { 'retry-after': '120' }).end('slow down')
      return
    case 'busy-long':
      response.writeHead(429, { 'retry-after': '86400' }).end('come back tomorrow')
      return
    case 'busy-no-retry-after':
      response.writeHead(429).end('slow down')
      return
    case 'error':
      response.writeHead(500, { 'content-type': 'text/plain' }).end(LONG_BODY)
      return
    case 'hang':
      return // never answers; the sender's deadline ends it
    case 'reset':
      socket.destroy()
      return
    case 'redirect':
      response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end()
      return
    default:
      response.writeHead(404).end()
  }
}

export async function startReceivers(): Promise<Receivers> {
  const received: ReceivedRequest[] = []
  const recovered = new Set<string>()
  const load = { now: 0, max: 0 }
  const scripts = new Map<string, Answer[]>()
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const path = request.url ?? '/'
      received.push({
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      })
      let kind = recovered.has(path) ? 'ok' : path.slice(1).split('/')[0]!
      if (kind === 'script') kind = scripts.get(path)?.shift() ?? 'ok'
      answer(kind, response, request.socket, load)
    })
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    received,
    load,
    origin: `http://127.0.0.1:${port}`,
    url: (path) => `http://127.0.0.1:${port}/${path}`,
    script: (path, answers) => scripts.set(path, [...answers]),
    recover: (path) => recovered.add(path.startsWith('/') ? path : `/${path}`),
    async close() {
      for (const socket of sockets) socket.destroy()
      server.close()
      await once(server, 'close')
    },
  }
}
