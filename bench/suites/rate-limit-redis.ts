// @api-blocks/rate-limit on Redis (RedisRateLimitStore: one EVALSHA per check, GCRA) against
// rate-limiter-flexible's RateLimiterRedis (one EVAL per consume, fixed window), on this
// machine's Redis (REDIS_URL, default redis://127.0.0.1:6379), same client library (node-redis),
// same keys and quota. Checks are round-trip bound, so each task keeps CONCURRENCY checks in
// flight, as a server under load does, and the suite reports the median of ROUNDS rounds.
import { createRequire } from 'node:module'
import { createRateLimiter } from '@api-blocks/rate-limit'
import { RedisRateLimitStore } from '@api-blocks/redis'
import { createClient } from 'redis'

interface FlexibleLimiter {
  consume(key: string, points?: number): Promise<unknown>
}
const require = createRequire(import.meta.url)
const { RateLimiterRedis } = require('rate-limiter-flexible') as {
  RateLimiterRedis: new (options: Record<string, unknown>) => FlexibleLimiter
}

const KEYS = 1000
const CHECKS = 20_000
const CONCURRENCY = 32
const ROUNDS = 5

async function throughput(check: (key: string) => Promise<unknown>): Promise<number> {
  let next = 0
  const started = performance.now()
  const worker = async () => {
    while (next < CHECKS) {
      const index = next++
      await check(`bench:${index % KEYS}`)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return CHECKS / ((performance.now() - started) / 1000)
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

export default async function run(): Promise<void> {
  const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'
  const client = createClient({ url })
  client.on('error', () => undefined)
  try {
    await client.connect()
  } catch {
    console.log(`skipped: no Redis at ${url}`)
    return
  }
  const prefix = `bench:${crypto.randomUUID()}:`
  try {
    const ours = createRateLimiter({
      store: new RedisRateLimitStore({ client, prefix: `${prefix}ours:` }),
      policies: [{ name: 'minute', quota: 1_000_000, windowSeconds: 60 }],
    })
    const theirs = new RateLimiterRedis({
      storeClient: client,
      useRedisPackage: true,
      keyPrefix: `${prefix}theirs`,
      points: 1_000_000,
      duration: 60,
    })
    const swallow = (promise: Promise<unknown>) => promise.catch(() => undefined)
    const results = { ours: [] as number[], theirs: [] as number[] }
    await throughput((key) => ours.check(key)) // warm-up (loads the script)
    await throughput((key) => swallow(theirs.consume(key)))
    for (let round = 0; round < ROUNDS; round += 1) {
      results.ours.push(await throughput((key) => ours.check(key)))
      results.theirs.push(await throughput((key) => swallow(theirs.consume(key))))
    }
    const ourOps = median(results.ours)
    const theirOps = median(results.theirs)
    console.table([
      {
        limiter: '@api-blocks/rate-limit + RedisRateLimitStore (1 EVALSHA)',
        'checks/s': Math.round(ourOps),
      },
      {
        limiter: 'rate-limiter-flexible RateLimiterRedis (1 EVAL)',
        'checks/s': Math.round(theirOps),
      },
    ])
    console.log(
      `ratio ours/theirs: ${(ourOps / theirOps).toFixed(2)} (${CONCURRENCY} in flight, ${KEYS} keys)`,
    )
  } finally {
    const keys = await client.keys(`${prefix}*`)
    if (keys.length > 0) await client.del(keys)
    await client.close()
  }
}
