// A client that pipelines requests and never reads their responses must not grow the server
// without bound: node:http runs the handler of every request it parsed and keeps each response
// until the ones before it are written. The server runs in a child process, so that the memory
// measured (its RSS) is only the server's.
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { request } from 'node:http'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, test } from 'vitest'

const fixture = fileURLToPath(new URL('./fixtures/pipe-server.ts', import.meta.url))
const MiB = 2 ** 20
let child: ChildProcess | undefined
afterEach(() => {
  child?.kill()
  child = undefined
})

async function start(): Promise<number> {
  child = spawn(process.execPath, ['--conditions=@api-blocks/source', fixture], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [line] = (await once(child.stdout!, 'data')) as [Buffer]
  return Number(line.toString().trim())
}

// On a connection of its own: the pipelining one is stuck.
function rss(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ port, host: '127.0.0.1', path: '/rss', agent: false }, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => {
        text += chunk
      })
      res.on('end', () => resolve((JSON.parse(text) as { rss: number }).rss))
    })
      .on('error', reject)
      .end()
  })
}

test('a client that pipelines 300 requests for 1 MiB each and never reads grows the server by far less than 300 MiB', async () => {
  const port = await start()
  const before = await rss(port)
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.pause()
  socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(300))
  let peak = before
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    peak = Math.max(peak, await rss(port))
  }
  socket.destroy()
  // Without the cap (maxPipelinedRequests: Infinity) it grows by over 600 MiB.
  expect((peak - before) / MiB).toBeLessThan(100)
}, 20_000)
