import { runPersistedDocumentStoreConformance } from '@api-blocks/graphql/testing'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { commandsSentBy } from '../test/commands.ts'
import { clientOptions, deletePrefix, redisUrl, serverSuite, testPrefix } from '../test/server.ts'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import { GET } from './internal/persisted-document-scripts.ts'
import { RedisPersistedDocumentStore } from './persisted-document-store.ts'

const ID = 'sha256:ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38'

/** A client that answers every script call with `reply`. */
function answering(reply: unknown): RedisScriptClient {
  return { evalSha: async () => reply, eval: async () => reply }
}

describe('RedisPersistedDocumentStore without a server', () => {
  test('the constructor refuses a bad client, prefix, ttlMs or maxDocumentBytes', () => {
    const client = answering(null)
    expect(() => new RedisPersistedDocumentStore({ client: {} as RedisScriptClient })).toThrow(
      TypeError,
    )
    expect(
      () => new RedisPersistedDocumentStore({ client, prefix: 5 as unknown as string }),
    ).toThrow(TypeError)
    for (const ttlMs of [0, -1, 1.5, Number.NaN]) {
      expect(() => new RedisPersistedDocumentStore({ client, ttlMs })).toThrow(RangeError)
    }
    expect(() => new RedisPersistedDocumentStore({ client, maxDocumentBytes: 0 })).toThrow(
      RangeError,
    )
    const store = new RedisPersistedDocumentStore({ client })
    expect([store.prefix, store.ttlMs, store.maxDocumentBytes]).toEqual([
      'api-blocks:graphql-documents:',
      7 * 86_400_000,
      100 * 1024,
    ])
  })

  test('bad ids and oversize documents are refused (get answers undefined) before anything is sent', async () => {
    const calls: unknown[] = []
    const client: RedisScriptClient = {
      evalSha: async (...args) => calls.push(args),
      eval: async (...args) => calls.push(args),
    }
    const store = new RedisPersistedDocumentStore({ client, maxDocumentBytes: 10 })
    expect(await store.get('')).toBeUndefined()
    expect(await store.get('x'.repeat(257))).toBeUndefined()
    await expect(store.set('', '{ a }')).rejects.toThrow(RangeError)
    await expect(store.set(ID, 'x'.repeat(11))).rejects.toThrow(RangeError)
    await expect(store.set(ID, 'é'.repeat(6))).rejects.toThrow(RangeError) // 12 bytes
    await expect(store.set(ID, 5 as unknown as string)).rejects.toThrow(TypeError)
    expect(calls).toEqual([])
  })

  test('on NOSCRIPT it sends the source with EVAL; the key is prefixed; the TTL is sent ("0" for Infinity)', async () => {
    const calls: string[] = []
    const client: RedisScriptClient = {
      evalSha: async (sha1, call) => {
        calls.push(`EVALSHA ${sha1 === GET.sha1} ${call.keys.join()} ${call.arguments.join()}`)
        throw new Error('NOSCRIPT No matching script. Please use EVAL.')
      },
      eval: async (script, call) => {
        calls.push(`EVAL ${script === GET.source} ${call.keys.join()}`)
        return '{ a }'
      },
    }
    expect(await new RedisPersistedDocumentStore({ client, prefix: 'p:' }).get('d1')).toBe('{ a }')
    const forever = new RedisPersistedDocumentStore({
      client,
      prefix: 'p:',
      ttlMs: Number.POSITIVE_INFINITY,
    })
    expect(await forever.get('d1')).toBe('{ a }')
    expect(calls).toEqual([
      `EVALSHA true p:d1 ${7 * 86_400_000}`,
      'EVAL true p:d1',
      'EVALSHA true p:d1 0',
      'EVAL true p:d1',
    ])
  })

  test('a client error rejects with COMMAND_FAILED (503), a strange reply with UNEXPECTED_REPLY', async () => {
    const failure = new Error('Socket closed unexpectedly')
    const failing = new RedisPersistedDocumentStore({
      client: { evalSha: () => Promise.reject(failure), eval: () => Promise.reject(failure) },
    })
    for (const call of [() => failing.get(ID), () => failing.set(ID, '{ a }')]) {
      const error = await call().catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(RedisStoreError)
      expect(error).toMatchObject({ code: 'COMMAND_FAILED' })
      expect((error as RedisStoreError).cause).toBe(failure)
      expect((error as RedisStoreError).toProblem().status).toBe(503)
    }
    for (const reply of [1, [1], {}]) {
      await expect(
        new RedisPersistedDocumentStore({ client: answering(reply) }).get(ID),
      ).rejects.toMatchObject({ code: 'UNEXPECTED_REPLY', operation: 'graphql-documents.get' })
    }
    // A Buffer reply (a client mapping blob strings to Buffer) is read as UTF-8.
    expect(
      await new RedisPersistedDocumentStore({ client: answering(Buffer.from('{ é }')) }).get(ID),
    ).toBe('{ é }')
  })
})

describe.skipIf(redisUrl === undefined)(serverSuite('RedisPersistedDocumentStore on Redis'), () => {
  const client = createClient(clientOptions)
  client.on('error', () => {}) // failures reach the tests as rejections
  const prefix = testPrefix('graphql-documents')
  const store = new RedisPersistedDocumentStore({ client, prefix })

  beforeAll(async () => {
    await client.connect()
  })
  afterAll(async () => {
    await deletePrefix(client, prefix)
    client.destroy()
  })

  runPersistedDocumentStoreConformance('RedisPersistedDocumentStore', () => store, {
    maxDocumentBytes: 100 * 1024,
  })
  runPersistedDocumentStoreConformance(
    'RedisPersistedDocumentStore (no TTL, 1 KiB)',
    () =>
      new RedisPersistedDocumentStore({
        client,
        prefix,
        ttlMs: Number.POSITIVE_INFINITY,
        maxDocumentBytes: 1024,
      }),
    { maxDocumentBytes: 1024 },
  )

  test('set writes the TTL, a get refreshes it; each call is one EVALSHA', async () => {
    const short = new RedisPersistedDocumentStore({ client, prefix, ttlMs: 60_000 })
    await short.set('warm', '{ a }') // primes the server's script cache
    await short.get('warm')
    const commands = await commandsSentBy(client, async () => {
      await short.set('doc', '{ a }')
      expect(await short.get('doc')).toBe('{ a }')
      expect(await short.get('missing')).toBeUndefined()
    })
    expect(commands).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA'])
    const ttl = await client.pTTL(`${prefix}doc`)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
    // A read sets the TTL back to its full length (shortened by hand here).
    await client.pExpire(`${prefix}doc`, 5_000)
    expect(await short.get('doc')).toBe('{ a }')
    expect(await client.pTTL(`${prefix}doc`)).toBeGreaterThan(5_000)
    // A missing key gets no TTL written (nothing is created).
    expect(await client.exists(`${prefix}missing`)).toBe(0)
  })

  test('ttlMs: Infinity stores documents without a TTL, and a get adds none', async () => {
    const forever = new RedisPersistedDocumentStore({
      client,
      prefix,
      ttlMs: Number.POSITIVE_INFINITY,
    })
    await forever.set('kept', '{ a }')
    expect(await forever.get('kept')).toBe('{ a }')
    expect(await client.pTTL(`${prefix}kept`)).toBe(-1)
  })
})
