// @api-blocks/rate-limit on Redis (RedisRateLimitStore: one EVALSHA per check, GCRA) against
// rate-limiter-flexible's RateLimiterRedis (one EVAL per consume, fixed window), on this
// machine's Redis (REDIS_URL, default redis://127.0.0.1:6379), same client library (node-redis),
// same keys and quota. Checks are round-trip bound, so each task keeps CONCURRENCY checks in
// flight, as a server under load does.
//
// The machines are shared and Redis runs on the same cores, so throughput drifts between
// seconds. Both limiters are warmed up twice, in turn (so the client library's code is compiled
// for both command shapes before anything is timed); then each of ROUNDS rounds times the two
// back to back, in alternating order, and the ratio reported is the median of the per-round
// ratios: a pair shares the machine's state of the moment, which a ratio of medians does not.
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
const ROUNDS = 9

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
  // The quota of the memory suite's two one-policy cases: mostly allowed (every check writes),
  // and mostly denied (GCRA writes nothing on a denied check; a fixed window still counts it).
  const regimes = [
    { name: 'mostly allowed (1,000,000 per 60 s)', points: 1_000_000, duration: 60 },
    { name: 'mostly denied (10 per 1 s)', points: 10, duration: 1 },
  ]
  try {
    const rows = []
    for (const [index, { name, points, duration }] of regimes.entries()) {
      const ours = createRateLimiter({
        store: new RedisRateLimitStore({ client, prefix: `${prefix}${index}:ours:` }),
        policies: [{ name: 'window', quota: points, windowSeconds: duration }],
      })
      const theirs = new RateLimiterRedis({
        storeClient: client,
        useRedisPackage: true,
        keyPrefix: `${prefix}${index}:theirs`,
        points,
        duration,
      })
      const swallow = (promise: Promise<unknown>) => promise.catch(() => undefined)
      const checkOurs = (key: string) => ours.check(key)
      const checkTheirs = (key: string) => swallow(theirs.consume(key))
      const results = { ours: [] as number[], theirs: [] as number[] }
      const ratios: number[] = []
      for (let warmUp = 0; warmUp < 2; warmUp += 1) {
        await throughput(checkOurs) // the first loads the script
        await throughput(checkTheirs)
      }
      for (let round = 0; round < ROUNDS; round += 1) {
        let ourOps: number
        let theirOps: number
        if (round % 2 === 0) {
          ourOps = await throughput(checkOurs)
          theirOps = await throughput(checkTheirs)
        } else {
          theirOps = await throughput(checkTheirs)
          ourOps = await throughput(checkOurs)
        }
        results.ours.push(ourOps)
        results.theirs.push(theirOps)
        ratios.push(ourOps / theirOps)
      }
      const spread = [...ratios].sort((a, b) => a - b)
      rows.push({
        case: name,
        'ours checks/s (1 EVALSHA)': Math.round(median(results.ours)),
        'rate-limiter-flexible checks/s (1 EVAL)': Math.round(median(results.theirs)),
        'ours/theirs': median(ratios).toFixed(2),
        'paired rounds': `${spread[0]?.toFixed(2)} to ${spread.at(-1)?.toFixed(2)}`,
      })
    }
    console.table(rows)
    console.log(
      `ours/theirs is the median of ${ROUNDS} paired rounds; ${CONCURRENCY} in flight, ${KEYS} keys, one node-redis client`,
    )
  } finally {
    const keys = await client.keys(`${prefix}*`)
    if (keys.length > 0) await client.del(keys)
    await client.close()
  }
}
