// The service as src/main.ts serves it (node adapter, lightweight objects, a free port) on the
// stores an environment names: what the instance and store-fault tests run against.
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { serve } from '@api-blocks/node'
import type { ServiceOptions } from '../src/app.ts'
import { createService } from '../src/app.ts'
import type { SharedStores, StoreEnvironment, StoreLogger } from '../src/stores.ts'
import { openStores } from '../src/stores.ts'

export interface RunningService {
  /** `http://127.0.0.1:<port>` */
  base: string
  stores: SharedStores
  /** Stops the server, then closes the stores. */
  close(): Promise<void>
}

export async function serveOnStores(
  env: StoreEnvironment,
  options: { logger?: StoreLogger; service?: ServiceOptions } = {},
): Promise<RunningService> {
  const stores = await openStores(env, options.logger ? { logger: options.logger } : {})
  const server = serve(
    createService({
      ...(stores.orderStore ? { orderStore: stores.orderStore } : {}),
      ...(stores.idempotencyStore ? { idempotencyStore: stores.idempotencyStore } : {}),
      ...(stores.rateLimitStore ? { rateLimitStore: stores.rateLimitStore } : {}),
      ...options.service,
    }),
    { port: 0, hostname: '127.0.0.1', lightweight: true },
  )
  await once(server, 'listening')
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stores,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await stores.close()
    },
  }
}
