import { runDedupStoreConformance } from '@api-blocks/webhooks/testing'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { commandsSentBy } from '../test/commands.ts'
import { clientOptions, deletePrefix, redisUrl, serverSuite, testPrefix } from '../test/server.ts'
import type { RedisScriptClient } from './client.ts'
import { RedisDedupStore } from './dedup-store.ts'
import { RedisStoreError } from './error.ts'
import { CLAIM } from './internal/dedup-scripts.ts'

const DAY = 86_400_000

/** A client that answers every script call with `reply`. */
function answering(reply: unknown): RedisScriptClient {
  return { evalSha: async () => reply, eval: async () => reply }
}

describe('RedisDedupStore without a server', () => {
  test('the constructor refuses a client without evalSha/eval and a prefix that is not a string', () => {
    expect(() => new RedisDedupStore({ client: {} as RedisScriptClient })).toThrow(TypeError)
    expect(
      () => new RedisDedupStore({ client: answering(1), prefix: 5 as unknown as string }),
    ).toThrow(TypeError)
  })

  test('bad ids and TTLs are refused before anything is sent', async () => {
    const calls: unknown[] = []
    const client: RedisScriptClient = {
      evalSha: async (...args) => calls.push(args),
      eval: async (...args) => calls.push(args),
    }
    const store = new RedisDedupStore({ client })
    await expect(store.claim('', DAY)).rejects.toThrow(RangeError)
    await expect(store.claim('x'.repeat(257), DAY)).rejects.toThrow(RangeError)
    await expect(store.claim('msg_1', 0)).rejects.toThrow(RangeError)
    await expect(store.claim('msg_1', Number.POSITIVE_INFINITY)).rejects.toThrow(RangeError)
    await expect(store.release('')).rejects.toThrow(RangeError)
    expect(calls).toEqual([])
  })

  test('on NOSCRIPT it sends the source with EVAL; the key is prefixed; a fractional TTL rounds up', async () => {
    const calls: string[] = []
    const client: RedisScriptClient = {
      evalSha: async (sha1, call) => {
        calls.push(`EVALSHA ${sha1 === CLAIM.sha1} ${call.keys.join()} ${call.arguments.join()}`)
        throw new Error('NOSCRIPT No matching script. Please use EVAL.')
      },
      eval: async (script, call) => {
        calls.push(`EVAL ${script === CLAIM.source} ${call.keys.join()}`)
        return 1
      },
    }
    expect(await new RedisDedupStore({ client, prefix: 'p:' }).claim('msg_1', 1.5)).toBe(true)
    expect(calls).toEqual(['EVALSHA true p:msg_1 2', 'EVAL true p:msg_1'])
  })

  test('a client error rejects with COMMAND_FAILED (503), a strange reply with UNEXPECTED_REPLY', async () => {
    const failure = new Error('Socket closed unexpectedly')
    const failing = new RedisDedupStore({
      client: { evalSha: () => Promise.reject(failure), eval: () => Promise.reject(failure) },
    })
    for (const call of [() => failing.claim('msg_1', DAY), () => failing.release('msg_1')]) {
      const error = await call().catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(RedisStoreError)
      expect(error).toMatchObject({ code: 'COMMAND_FAILED' })
      expect((error as RedisStoreError).cause).toBe(failure)
      expect((error as RedisStoreError).toProblem().status).toBe(503)
    }
    for (const reply of [2, 'OK', null, [1]]) {
      await expect(
        new RedisDedupStore({ client: answering(reply) }).claim('msg_1', DAY),
      ).rejects.toMatchObject({ code: 'UNEXPECTED_REPLY', operation: 'webhook-dedup.claim' })
    }
    // Integer replies as strings or bigints (a client's type mapping) are read exactly.
    expect(await new RedisDedupStore({ client: answering('0') }).claim('msg_1', DAY)).toBe(false)
    expect(await new RedisDedupStore({ client: answering(1n) }).claim('msg_1', DAY)).toBe(true)
  })
})

describe.skipIf(redisUrl === undefined)(serverSuite('RedisDedupStore on Redis'), () => {
  const client = createClient(clientOptions)
  client.on('error', () => {}) // failures reach the tests as rejections
  const prefix = testPrefix('webhook-dedup')
  const store = new RedisDedupStore({ client, prefix })

  beforeAll(async () => {
    await client.connect()
  })
  afterAll(async () => {
    await deletePrefix(client, prefix)
    client.destroy()
  })

  // Redis expires keys by its own clock: the expiry cases wait a short TTL in real time.
  runDedupStoreConformance('RedisDedupStore', () => store, { shortTtlMs: 200 })

  test('first wins, with the TTL on the key; release forgets; each call is one EVALSHA', async () => {
    // Prime the server's script cache, so the counts below are the steady state.
    await store.claim('warm', DAY)
    await store.release('warm')
    const commands = await commandsSentBy(client, async () => {
      expect(await store.claim('msg_a', DAY)).toBe(true)
      expect(await store.claim('msg_a', DAY)).toBe(false)
      await store.release('msg_a')
    })
    expect(commands).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA'])
    expect(await store.claim('msg_a', DAY)).toBe(true)
    const ttl = await client.pTTL(`${prefix}msg_a`)
    expect(ttl).toBeGreaterThan(DAY - 60_000)
    expect(ttl).toBeLessThanOrEqual(DAY)
  })

  test('50 concurrent claims of one id: exactly one is first', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () => store.claim('msg_race', DAY)),
    )
    expect(results.filter(Boolean)).toHaveLength(1)
  })
})
