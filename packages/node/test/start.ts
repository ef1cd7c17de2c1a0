/**
 * Starts node:http on 127.0.0.1 port 0 with a listener, for the tests.
 *
 * @module
 */
import { once } from 'node:events'
import type { RequestListener, Server } from 'node:http'
import { createServer } from 'node:http'

/** A listening server and its origin. */
export interface Listening {
  readonly server: Server
  readonly url: string
  close(): Promise<void>
}

/** Listens on 127.0.0.1 port 0. */
export async function listen(listener: RequestListener): Promise<Listening> {
  const server = createServer(listener)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
