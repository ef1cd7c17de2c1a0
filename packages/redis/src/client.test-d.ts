import type {
  createClient,
  createCluster,
  createSentinel,
  RedisClientType,
  RedisFunctions,
  RedisModules,
  RedisScripts,
  TypeMapping,
} from 'redis'
import { expectTypeOf, test } from 'vitest'
import type { RedisScriptClient } from './client.ts'

test('node-redis clients, clusters and sentinels satisfy RedisScriptClient as they are', () => {
  expectTypeOf<ReturnType<typeof createClient>>().toExtend<RedisScriptClient>()
  expectTypeOf<ReturnType<typeof createCluster>>().toExtend<RedisScriptClient>()
  expectTypeOf<ReturnType<typeof createSentinel>>().toExtend<RedisScriptClient>()
  // RESP2 clients and any type mapping too (node-redis 6 creates RESP3 clients by default).
  expectTypeOf<
    RedisClientType<RedisModules, RedisFunctions, RedisScripts, 2, TypeMapping>
  >().toExtend<RedisScriptClient>()
  expectTypeOf<{ evalSha(sha1: string): Promise<unknown> }>().not.toExtend<RedisScriptClient>()
})
