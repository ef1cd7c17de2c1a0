// `npm start --workspace examples/webhook-receiver`: the receiver on node:http. WEBHOOK_SECRET
// (required), PORT (default 4000), HOST (default 127.0.0.1), REDIS_URL (dedup records in
// Redis, shared by several receivers; default: in memory).
// `--with-service` (the root's `npm run start:with-receiver`): starts the reference service
// too, registers this receiver with it, and receives its events (src/with-service.ts).
import { parsePort, parseSecrets } from './config.ts'
import { startReceiver } from './server.ts'
import { withService } from './with-service.ts'

if (process.argv.includes('--with-service')) {
  await withService()
} else {
  let secrets: string[]
  let port: number
  try {
    secrets = parseSecrets(process.env['WEBHOOK_SECRET'])
    port = parsePort('PORT', process.env['PORT'], 4000)
  } catch (error) {
    console.error(`Invalid configuration: ${(error as Error).message}`)
    process.exit(1)
  }
  const receiver = await startReceiver({
    secrets,
    port,
    host: process.env['HOST'] ?? '127.0.0.1',
    redisUrl: process.env['REDIS_URL'],
    redisPrefix: process.env['REDIS_PREFIX'],
  })
  console.log(
    `webhook receiver listening on ${receiver.origin}/webhooks (dedup: ${process.env['REDIS_URL'] ? 'Redis' : 'in memory'})`,
  )
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void receiver.close().then(() => process.exit(0)))
  }
}
