/**
 * Redis implementations of the api-blocks store interfaces, on a client you create and connect
 * (node-redis): `RedisIdempotencyStore`, `RedisRateLimitStore`, `RedisOAuthStore`,
 * `RedisDedupStore` (the webhook receiver's). The GraphQL stores (`RedisPersistedDocumentStore`,
 * `RedisPubSub`) are on the `@api-blocks/redis/graphql` subpath. Each store operation is one Lua script
 * run by `EVALSHA`: one round trip, atomic. Each passes its package's conformance suite against
 * a real server.
 *
 * @example
 * ```ts
 * import { RedisIdempotencyStore, RedisRateLimitStore } from '@api-blocks/redis'
 * import { createClient } from 'redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const idempotencyStore = new RedisIdempotencyStore({ client })
 * const rateLimitStore = new RedisRateLimitStore({ client })
 * ```
 *
 * @module
 */

export type { RedisScriptCall, RedisScriptClient } from './client.ts'
export type { RedisDedupStoreOptions } from './dedup-store.ts'
export { RedisDedupStore } from './dedup-store.ts'
export type { RedisStoreErrorCode } from './error.ts'
export { RedisStoreError } from './error.ts'
export type { RedisIdempotencyStoreOptions } from './idempotency-store.ts'
export { RedisIdempotencyStore } from './idempotency-store.ts'
export type { RedisOAuthStoreOptions } from './oauth-store.ts'
export { RedisOAuthStore } from './oauth-store.ts'
export type { RedisRateLimitStoreOptions } from './rate-limit-store.ts'
export { RedisRateLimitStore } from './rate-limit-store.ts'
export type { ReconnectBackoffOptions } from './reconnect.ts'
export { reconnectBackoff } from './reconnect.ts'
