// The receiver served on node:http (the node adapter's serve), its dedup records in memory
// or, with a Redis URL, in Redis (several receivers behind one URL then drop each other's
// repeats).
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { serve } from '@api-blocks/node'
import { RedisDedupStore } from '@api-blocks/redis'
import type { DedupStore } from '@api-blocks/webhooks'
import { createClient } from 'redis'
import type { ReceivedEvent } from './receiver.ts'
import { createReceiverApp } from './receiver.ts'

/** A running receiver. */
export interface RunningReceiver {
  /** `http://<host>:<port>` */
  origin: string
  close(): Promise<void>
}

/** Serves the receiver; dedup records in Redis when `redisUrl` is given. */
export async function startReceiver(options: {
  secrets: readonly string[]
  port: number
  host: string
  redisUrl?: string | undefined
  redisPrefix?: string | undefined
  log?: (line: string) => void
}): Promise<RunningReceiver> {
  const log = options.log ?? ((line: string) => console.log(line))
  let dedup: DedupStore | undefined
  let redis: ReturnType<typeof createClient> | undefined
  if (options.redisUrl) {
    redis = createClient({
      url: options.redisUrl,
      socket: { connectTimeout: 1_000 },
      disableOfflineQueue: true,
      commandOptions: { timeout: 1_000 },
    })
    redis.on('error', (error: Error) => log(`redis: ${error.message}`))
    await redis.connect()
    dedup = new RedisDedupStore({
      client: redis,
      prefix: options.redisPrefix ?? 'webhook-receiver:dedup:',
    })
  }
  const app = createReceiverApp({
    secrets: options.secrets,
    ...(dedup ? { dedup } : {}),
    onEvent: (event: ReceivedEvent) => log(JSON.stringify(event)),
    onError: (error) => log(`handler failed: ${(error as Error).message}`),
  })
  const server = serve(app, { port: options.port, hostname: options.host })
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  const shown = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    origin: `http://${shown}:${port}`,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await redis?.close()
    },
  }
}
