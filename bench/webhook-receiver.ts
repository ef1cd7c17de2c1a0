// The loopback receiver of the webhooks suite, in a child process of its own (`node
// webhook-receiver.ts`, pinned to CPU 0 by startNode): a bare node:http server that reads each
// POST's body to the end and answers 200 with no body, the least a receiver can do. GET /count
// answers how many POSTs it has answered, so the suite checks that every delivery arrived.
import { createServer } from 'node:http'

let count = 0
const server = createServer((request, response) => {
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'text/plain' })
    response.end(String(count))
    return
  }
  request.resume()
  request.on('end', () => {
    count += 1
    response.writeHead(200, { 'content-length': '0' })
    response.end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  console.log(`listening on http://127.0.0.1:${address.port}`)
})
