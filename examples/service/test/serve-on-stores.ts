// The service as src/main.ts serves it (node adapter, lightweight objects, a free port) on the
// stores an environment names: what the instance, store-fault and OAuth tests run against. As
// in main.ts, the service is made once the server listens, so its public URL (the issuer)
// names the port it got, unless the options give one.
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import type { Handler } from '@api-blocks/http'
import { serve } from '@api-blocks/node'
import type { ServiceOptions } from '../src/app.ts'
import { createService } from '../src/app.ts'
import type { SharedStores, StoreEnvironment, StoreLogger } from '../src/stores.ts'
import { openStores } from '../src/stores.ts'
import type { ServiceWebhooks, WebhooksOptions } from '../src/webhooks/setup.ts'
import { createWebhooks } from '../src/webhooks/setup.ts'

/** The key every test instance seals endpoint secrets with (see main.ts). */
const SHARED_SECRETS_KEY = new Uint8Array(32).fill(7)

export interface RunningService {
  /** `http://127.0.0.1:<port>` */
  base: string
  stores: SharedStores
  /** The outbound webhooks on the stores, their worker running (as main.ts runs it). */
  webhooks: ServiceWebhooks
  /** Stops the server and the worker, then closes the stores. */
  close(): Promise<void>
}

export async function serveOnStores(
  env: StoreEnvironment,
  options: {
    logger?: StoreLogger
    service?: ServiceOptions
    /** The webhook settings (default: the typical schedule, no private origin allowed). */
    webhooks?: Omit<WebhooksOptions, 'endpointStore' | 'queue'>
  } = {},
): Promise<RunningService> {
  const stores = await openStores(env, options.logger ? { logger: options.logger } : {})
  const webhooks = createWebhooks({
    ...(stores.webhookEndpointStore ? { endpointStore: stores.webhookEndpointStore } : {}),
    ...(stores.deliveryQueue ? { queue: stores.deliveryQueue } : {}),
    // Instances on one database share the key that seals endpoint secrets (main.ts derives it
    // from OAUTH_TOKEN_KEY); without one, each would make its own and not open the other's.
    encryptionKey: SHARED_SECRETS_KEY,
    ...options.webhooks,
  })
  // As main.ts: a committed order write wakes this instance's worker.
  stores.wakeAfterCommit(() => webhooks.worker.wake())
  let service: Handler | undefined
  const server = serve((request) => (service as Handler)(request), {
    port: 0,
    hostname: '127.0.0.1',
    lightweight: true,
  })
  await once(server, 'listening')
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  service = createService({
    publicUrl: base,
    ...(stores.orderStore ? { orderStore: stores.orderStore } : {}),
    webhooks,
    ...(stores.idempotencyStore ? { idempotencyStore: stores.idempotencyStore } : {}),
    ...(stores.rateLimitStore ? { rateLimitStore: stores.rateLimitStore } : {}),
    ...options.service,
    oauth: {
      ...(stores.oauthStore ? { store: stores.oauthStore } : {}),
      ...options.service?.oauth,
    },
  })
  webhooks.worker.start()
  return {
    base,
    stores,
    webhooks,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await webhooks.close()
      await stores.close()
    },
  }
}
