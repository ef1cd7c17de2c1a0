/**
 * A real HTTP server on port 0 for the tests of the JWKS and introspection clients: it answers
 * with a handler the test changes at will and records every request it receives.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage['headers']
  readonly body: string
}

export type TestHandler = (request: RecordedRequest, response: ServerResponse) => void

export interface TestServer {
  readonly url: string
  readonly requests: RecordedRequest[]
  handler: TestHandler
  close(): Promise<void>
}

export async function startServer(handler: TestHandler): Promise<TestServer> {
  const requests: RecordedRequest[] = []
  const state = { handler }
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      requests.push(recorded)
      state.handler(recorded, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get handler() {
      return state.handler
    },
    set handler(next: TestHandler) {
      state.handler = next
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export function json(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(text)
}
