// @api-blocks/rate-limit (GCRA, MemoryRateLimitStore) against rate-limiter-flexible's
// RateLimiterMemory (a fixed window from a key's first hit), in memory, same keys and quotas.
//
// Hits are spread round-robin over KEYS keys. Each sample awaits BATCH checks, so promise
// overheads are measured as a caller sees them. Three cases:
// - mostly allowed: a quota no key reaches during the run;
// - mostly denied: 10 per second per key, far below the rate each key is hit at;
// - two policies (10/s and 1000/day): ours checks and charges both in one atomic step;
//   theirs is RateLimiterUnion over two RateLimiterMemory (two calls, not atomic, and a
//   rejected call still drains the other limiter: rate-limiter-flexible#286, #150).
// Ours does more per call (exact GCRA, remaining and reset for every policy).
// The memory store answers with a settled promise, as the store contract asks of every store
// (until issue 12 it answered synchronously and saved the limiter a promise per check): these
// cases show what the contract costs in memory.
//
// The machines are shared, so the suite runs ROUNDS rounds, each timing every task once in
// turn, and reports the median ops/s of each task.
import { createRequire } from 'node:module'
import type { RateLimitPolicy } from '@api-blocks/rate-limit'
import { createRateLimiter, MemoryRateLimitStore } from '@api-blocks/rate-limit'
import { Bench } from 'tinybench'

interface FlexibleLimiter {
  consume(key: string, points?: number): Promise<unknown>
}
interface FlexibleModule {
  RateLimiterMemory: new (options: {
    points: number
    duration: number
    keyPrefix?: string
  }) => FlexibleLimiter
  RateLimiterUnion: new (...limiters: FlexibleLimiter[]) => FlexibleLimiter
}
const require = createRequire(import.meta.url)
const flexible = require('rate-limiter-flexible') as FlexibleModule

const KEYS = 1000
const BATCH = 100
const ROUNDS = 5
const TIME_MS = 250
const keys = Array.from({ length: KEYS }, (_, i) => `ip:198.51.${i >> 8}.${i & 0xff}/32`)
let sink = 0

interface Case {
  name: string
  policies: readonly RateLimitPolicy[]
}

const cases: Case[] = [
  {
    name: 'mostly allowed (1,000,000 per 60 s)',
    policies: [{ name: 'big', quota: 1_000_000, windowSeconds: 60 }],
  },
  {
    name: 'mostly denied (10 per 1 s)',
    policies: [{ name: 'burst', quota: 10, windowSeconds: 1 }],
  },
  {
    name: 'two policies (10/s + 1000/day)',
    policies: [
      { name: 'burst', quota: 10, windowSeconds: 1 },
      { name: 'daily', quota: 1000, windowSeconds: 86_400 },
    ],
  },
]

function flexibleFor(policies: readonly RateLimitPolicy[]): FlexibleLimiter {
  const limiters = policies.map(
    (policy) =>
      new flexible.RateLimiterMemory({
        points: policy.quota,
        duration: policy.windowSeconds,
        keyPrefix: policy.name,
      }),
  )
  return limiters.length === 1 ? limiters[0]! : new flexible.RateLimiterUnion(...limiters)
}

/** Both must let exactly the quota through on a fresh key's burst before timing means anything. */
async function agreeOnABurst(): Promise<void> {
  const policies = [{ name: 'burst', quota: 10, windowSeconds: 1 }]
  const ours = createRateLimiter({ store: new MemoryRateLimitStore(), policies })
  const theirs = flexibleFor(policies)
  let passedOurs = 0
  let passedTheirs = 0
  for (let i = 0; i < 25; i++) {
    if ((await ours.check('sanity')).allowed) passedOurs++
    await theirs.consume('sanity').then(
      () => passedTheirs++,
      () => undefined,
    )
  }
  if (passedOurs !== 10 || passedTheirs !== 10) {
    throw new Error(
      `burst of 25 at quota 10: ours let ${passedOurs} through, theirs ${passedTheirs}`,
    )
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

export default async function (): Promise<void> {
  await agreeOnABurst()
  const tasks = cases.flatMap(({ name, policies }) => {
    const ours = createRateLimiter({ store: new MemoryRateLimitStore(), policies })
    const theirs = flexibleFor(policies)
    let a = 0
    let b = 0
    return [
      {
        name: `ours ${name}`,
        fn: async () => {
          for (let i = 0; i < BATCH; i++) {
            const result = await ours.check(keys[a++ % KEYS]!)
            sink += result.allowed ? 1 : 0
          }
        },
      },
      {
        name: `theirs ${name}`,
        fn: async () => {
          for (let i = 0; i < BATCH; i++) {
            try {
              await theirs.consume(keys[b++ % KEYS]!)
              sink++
            } catch {
              // rejected: a RateLimiterRes (or a map of them, for the union)
            }
          }
        },
      },
    ]
  })
  const samples = new Map<string, number[]>(tasks.map((task) => [task.name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const bench = new Bench({ time: TIME_MS, warmupTime: round === 0 ? 300 : 50 })
    for (const task of tasks) bench.add(task.name, task.fn)
    await bench.run()
    for (const task of tasks) {
      const result = bench.getTask(task.name)?.result
      if (result === undefined || !('period' in result)) throw new Error(`${task.name} failed`)
      samples.get(task.name)!.push((1000 / result.period) * BATCH)
    }
  }

  const rows = cases.map(({ name }) => {
    const ours = median(samples.get(`ours ${name}`)!)
    const theirs = median(samples.get(`theirs ${name}`)!)
    return {
      case: name,
      'ours ops/s': Math.round(ours).toLocaleString('en-US'),
      'rate-limiter-flexible ops/s': Math.round(theirs).toLocaleString('en-US'),
      'ours/theirs': (ours / theirs).toFixed(2),
    }
  })
  console.log(
    `\nLimiter checks in memory, ${KEYS} keys round-robin, median of ${ROUNDS} rounds: ops/s, higher is better`,
  )
  console.table(rows)
  if (sink === -1) console.log(sink)
}
