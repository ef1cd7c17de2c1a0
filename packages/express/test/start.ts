/**
 * Starts an Express app on 127.0.0.1 port 0, for the tests.
 *
 * @module
 */
import { once } from 'node:events'
import type { Express } from 'express'

/** A listening app and its origin. */
export interface Listening {
  readonly url: string
  close(): Promise<void>
}

/** Listens on 127.0.0.1 port 0. */
export async function listen(app: Express): Promise<Listening> {
  const server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
