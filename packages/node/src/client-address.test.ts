import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { afterEach, expect, test } from 'vitest'
import { clientAddressOf } from './client-address.ts'
import { serve } from './serve.ts'

const servers: { close(): void }[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

test.each([true, false])(
  'the remote address of the socket is known (lightweight: %s)',
  async (lightweight) => {
    const server = serve(
      async (request) => Response.json({ address: clientAddressOf(request) ?? null }),
      {
        port: 0,
        hostname: '127.0.0.1',
        lightweight,
      },
    )
    servers.push(server)
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    const response = await fetch(`http://127.0.0.1:${port}/`)
    expect(await response.json()).toEqual({ address: '127.0.0.1' })
  },
)

test('a request the adapter did not convert has no address', () => {
  expect(clientAddressOf(new Request('http://x.test/'))).toBeUndefined()
})
