/**
 * The Redis stores of @api-blocks/graphql, on their own subpath so that the other stores of
 * this package need neither graphql nor @api-blocks/graphql installed: `RedisPersistedDocumentStore`
 * (persisted queries shared by every instance) and `RedisPubSub` (subscriptions across instances).
 *
 * @example
 * ```ts
 * import { RedisPersistedDocumentStore, RedisPubSub } from '@api-blocks/redis/graphql'
 * import { createClient } from 'redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const documents = new RedisPersistedDocumentStore({ client })
 * const pubsub = new RedisPubSub({ client })
 * ```
 *
 * @module
 */

export type { RedisPersistedDocumentStoreOptions } from './persisted-document-store.ts'
export { RedisPersistedDocumentStore } from './persisted-document-store.ts'
export type {
  RedisMessageListener,
  RedisPubSubClient,
  RedisPubSubEvent,
  RedisPubSubOptions,
  RedisSubscriberClient,
} from './pubsub.ts'
export { RedisPubSub } from './pubsub.ts'
