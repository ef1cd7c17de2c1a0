// `npm start`: the reference service on node:http with embedded (in-memory) defaults.
import { serve } from '@api-blocks/node'
import { createService } from './app.ts'
import { openStores } from './stores.ts'

const port = Number(process.env['PORT'] ?? 3000)
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT must be a port number, got "${process.env['PORT']}"`)
  process.exit(1)
}
const host = process.env['HOST'] ?? '127.0.0.1'
const publicUrl = `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`

const stores = await openStores(process.env)
const service = createService({
  publicUrl,
  ...(stores.idempotencyStore ? { idempotencyStore: stores.idempotencyStore } : {}),
  ...(stores.rateLimitStore ? { rateLimitStore: stores.rateLimitStore } : {}),
  onError: (error) => console.error('unexpected error:', error),
})
const server = await serve(service, { port, hostname: host })
const base = publicUrl.replace(/:\d+$/, `:${(server.address() as { port: number }).port}`)

console.log(`api-blocks reference service listening on ${base}
  orders:   ${base}/v1/orders
  openapi:  ${base}/openapi.json
  storage:  ${stores.description}

Try:
  curl -i ${base}/v1/orders
  curl -i -X POST ${base}/v1/orders -H 'content-type: application/json' \\
       -d '{"customer":"Ada Lovelace","items":[{"sku":"BOOK-042","quantity":2}]}'
  curl -i ${base}/v1/orders/ord_000001
  curl -i -X PATCH ${base}/v1/orders/ord_000001 -H 'content-type: application/json' -d '{"note":"Gift wrap"}'
  curl -i -X POST ${base}/v1/orders/ord_000001/cancel
  curl -i -X OPTIONS ${base}/v1/orders -H 'origin: http://localhost:5173' -H 'access-control-request-method: POST'
  curl -i -X DELETE ${base}/v1/orders
`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => server.close(() => void stores.close().then(() => process.exit(0))))
}
