import { once } from 'node:events'
import { expect, test } from 'vitest'
import { serve } from './serve.ts'

test('serve() listens and answers with the handler', async () => {
  const server = serve(async (request) => Response.json({ method: request.method }), {
    port: 0,
    hostname: '127.0.0.1',
    server: { keepAliveTimeout: 1000 },
  })
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  try {
    expect(server.keepAliveTimeout).toBe(1000)
    const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'DELETE' })
    expect(await response.json()).toEqual({ method: 'DELETE' })
  } finally {
    server.closeAllConnections()
    server.close()
  }
})
