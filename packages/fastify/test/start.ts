/**
 * Starts a Fastify app on 127.0.0.1 port 0, for the tests.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify'

/** A listening app and its origin. */
export interface Listening {
  readonly url: string
  close(): Promise<void>
}

/** Listens on 127.0.0.1 port 0. */
export async function listen(app: FastifyInstance): Promise<Listening> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      app.server.closeAllConnections()
      await app.close()
    },
  }
}
