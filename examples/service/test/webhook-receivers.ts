// A receiver of the service's webhooks for the tests: a real node:http server on 127.0.0.1
// that keeps every request it gets (headers and raw bytes) and answers by path (the query
// tells endpoints apart): /ok 200, /fail 500, /gone 410, /hang never, anything else 404 (or
// what `answer` says; 0 is no answer).
import { once } from 'node:events'
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedRequest {
  path: string
  headers: Record<string, string>
  /** The raw body, as it came. */
  body: string
  /** The answer's status. */
  status: number
}

export interface TestReceiver {
  /** `http://127.0.0.1:<port>` */
  origin: string
  received: ReceivedRequest[]
  /** The first request (from `from` on) that `match` accepts, within `timeoutMs` (default 10 s). */
  waitFor(
    match: (request: ReceivedRequest) => boolean,
    options?: { from?: number; timeoutMs?: number },
  ): Promise<ReceivedRequest>
  close(): Promise<void>
}

const MAX_BODY = 1024 * 1024

/** Starts a receiver on a free loopback port. */
export async function startTestReceiver(
  answer: (pathname: string) => number = (pathname) =>
    pathname === '/ok'
      ? 200
      : pathname === '/fail'
        ? 500
        : pathname === '/gone'
          ? 410
          : pathname === '/hang'
            ? 0
            : 404,
): Promise<TestReceiver> {
  const received: ReceivedRequest[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > MAX_BODY) request.destroy()
      else chunks.push(chunk)
    })
    request.on('end', () => {
      const path = request.url ?? '/'
      const status = answer(path.split('?')[0] ?? path)
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers[name] = value
      }
      received.push({ path, headers, body: Buffer.concat(chunks).toString('utf8'), status })
      if (status === 0) return // holds the request until the sender's deadline
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    received,
    async waitFor(match, options = {}) {
      const deadline = Date.now() + (options.timeoutMs ?? 10_000)
      for (;;) {
        const found = received.slice(options.from ?? 0).find(match)
        if (found) return found
        if (Date.now() > deadline) {
          throw new Error(`No matching webhook within the time (${received.length} received)`)
        }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** The parsed body of a received webhook: the event envelope. */
export function eventOf(request: ReceivedRequest): {
  id: string
  type: string
  created: number
  version: string
  data: { object: Record<string, unknown> }
} {
  return JSON.parse(request.body)
}
