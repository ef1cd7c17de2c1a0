// `npm start`: the reference service on node:http with embedded (in-memory) defaults.
import { once } from 'node:events'
import { serve } from '@api-blocks/node'
import { createService } from './app.ts'
import { ConfigError, parseCursorKeys, parsePublicUrl } from './config.ts'
import { openStores } from './stores.ts'

const port = Number(process.env['PORT'] ?? 3000)
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT must be a port number, got "${process.env['PORT']}"`)
  process.exit(1)
}
const host = process.env['HOST'] ?? '127.0.0.1'
// PUBLIC_URL: where clients reach the service (behind a proxy: its URL), the base of Location
// and Link; CURSOR_SECRET: the keys that sign list cursors, the same on every instance
// (docs/service.md, "Several instances"). Invalid values stop the start.
let config: { publicUrl: string; cursorKeys?: ReturnType<typeof parseCursorKeys> }
try {
  config = {
    publicUrl: process.env['PUBLIC_URL']
      ? parsePublicUrl(process.env['PUBLIC_URL'])
      : `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`,
    ...(process.env['CURSOR_SECRET']
      ? { cursorKeys: parseCursorKeys(process.env['CURSOR_SECRET']) }
      : {}),
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  console.error(`Invalid configuration: ${error.message}`)
  process.exit(1)
}
const { publicUrl } = config

const createLatencyMs = Number(process.env['DEMO_LATENCY_MS'] ?? 0)
// Per client: RATE_LIMIT_PER_SECOND (default 10) and RATE_LIMIT_PER_HOUR (default 1000).
const rateLimits = [
  { name: 'burst', quota: Number(process.env['RATE_LIMIT_PER_SECOND'] ?? 10), windowSeconds: 1 },
  {
    name: 'hourly',
    quota: Number(process.env['RATE_LIMIT_PER_HOUR'] ?? 1000),
    windowSeconds: 3600,
  },
]
const stores = await openStores(process.env)
const service = createService({
  publicUrl,
  ...(config.cursorKeys ? { cursorKeys: config.cursorKeys } : {}),
  ...(stores.orderStore ? { orderStore: stores.orderStore } : {}),
  ...(stores.idempotencyStore ? { idempotencyStore: stores.idempotencyStore } : {}),
  ...(stores.rateLimitStore ? { rateLimitStore: stores.rateLimitStore } : {}),
  rateLimits,
  ...(createLatencyMs > 0 ? { createLatencyMs } : {}),
  onError: (error) => console.error('unexpected error:', error),
})
// The opt-in fast path of @api-blocks/node (lightweight Request and Response globals): the
// configuration the benchmarks measure, and the one the socket tests of this service run.
const server = serve(service, { port, hostname: host, lightweight: true })
await once(server, 'listening')
const base = publicUrl.replace(/:\d+$/, `:${(server.address() as { port: number }).port}`)

console.log(`api-blocks reference service listening on ${base}
  orders:   ${base}/v1/orders
  openapi:  ${base}/openapi.json
  storage:  ${stores.description}
  public:   ${publicUrl} (Location and Link; set PUBLIC_URL behind a proxy)
  cursors:  ${config.cursorKeys ? `signed with key "${config.cursorKeys[0]?.id}" (CURSOR_SECRET)` : 'WARNING: CURSOR_SECRET is not set: a random key, so cursors die with this process and fail on any other instance'}

Try (docs/service.md walks through every convention):
  curl -i -X POST ${base}/v1/orders -H 'content-type: application/json' -H 'idempotency-key: k1' \\
       -d '{"customer":"Ada Lovelace","items":[{"sku":"BOOK-042","quantity":2}]}'
  curl -i '${base}/v1/orders?limit=1'
  curl -i <the Location of the order> -H 'if-none-match: "1"'
  curl -i -X PATCH <the Location> -H 'if-match: "1"' -H 'content-type: application/json' \\
       -d '{"note":"Gift wrap"}'
  curl -i -X POST <the Location>/cancel
  curl -i -X DELETE ${base}/v1/orders
`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => server.close(() => void stores.close().then(() => process.exit(0))))
}
