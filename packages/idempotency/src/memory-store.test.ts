import { describe, expect, test } from 'vitest'
import { MemoryIdempotencyStore } from './memory-store.ts'
import type { StoredResponse } from './store.ts'
import { runIdempotencyStoreConformance } from './testing/index.ts'

runIdempotencyStoreConformance('memory', () => new MemoryIdempotencyStore())

const response = (bytes: number): StoredResponse => ({
  status: 200,
  headers: [],
  body: new Uint8Array(bytes),
})
const lease = { leaseMs: 1000 }

describe('MemoryIdempotencyStore bounds', () => {
  test('expired claims are swept without being accessed', async () => {
    const store = new MemoryIdempotencyStore()
    for (let index = 0; index < 10; index++) {
      await store.claim(`k${index}`, { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    }
    expect(store.size).toBe(10)
    // Each operation visits two records: ten claims of other keys later, all ten are gone.
    for (let index = 0; index < 10; index++) {
      await store.claim(`later${index}`, { fingerprint: 'f', owner: 'o', ...lease, now: 5000 })
      await store.release(`later${index}`, 'o')
    }
    expect(store.size).toBe(0)
  })

  test('at maxRecords the oldest completed record is evicted and reported', async () => {
    const evicted: string[] = []
    const store = new MemoryIdempotencyStore({ maxRecords: 2, onEvict: (key) => evicted.push(key) })
    for (const key of ['a', 'b']) {
      await store.claim(key, { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
      await store.complete(key, 'o', { response: response(1), retentionMs: 60_000, now: 0 })
    }
    expect((await store.claim('c', { fingerprint: 'f', owner: 'o', ...lease, now: 1 })).state).toBe(
      'claimed',
    )
    expect(evicted).toEqual(['a'])
    expect(store.size).toBe(2)
  })

  test('live claims are never evicted: when only they remain, claim rejects (fail closed)', async () => {
    const store = new MemoryIdempotencyStore({ maxRecords: 2 })
    await store.claim('a', { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    await store.claim('b', { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    await expect(
      store.claim('c', { fingerprint: 'f', owner: 'o', ...lease, now: 1 }),
    ).rejects.toThrow(/full/)
    // Once their leases end, there is room again.
    expect(
      (await store.claim('c', { fingerprint: 'f', owner: 'o', ...lease, now: 1000 })).state,
    ).toBe('claimed')
  })

  test('maxBytes evicts the oldest completed responses and refuses one larger than the limit', async () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 100 })
    for (const key of ['a', 'b']) {
      await store.claim(key, { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
      await store.complete(key, 'o', { response: response(40), retentionMs: 60_000, now: 0 })
    }
    await store.claim('c', { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    await store.complete('c', 'o', { response: response(40), retentionMs: 60_000, now: 0 })
    expect(store.bytes).toBe(80)
    expect((await store.claim('a', { fingerprint: 'f', owner: 'x', ...lease, now: 1 })).state).toBe(
      'claimed',
    )
    expect((await store.claim('b', { fingerprint: 'f', owner: 'x', ...lease, now: 1 })).state).toBe(
      'completed',
    )
    await store.claim('d', { fingerprint: 'f', owner: 'o', ...lease, now: 1 })
    await expect(
      store.complete('d', 'o', { response: response(101), retentionMs: 60_000, now: 1 }),
    ).rejects.toThrow(/maxBytes/)
    // Nothing half-written: the claim is still live and still the owner's.
    expect(await store.release('d', 'o')).toBe(true)
  })

  test('a replayed response is a copy: mutating it does not change the record', async () => {
    const store = new MemoryIdempotencyStore()
    await store.claim('k', { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    const body = new Uint8Array([1, 2, 3])
    await store.complete('k', 'o', {
      response: { status: 200, headers: [], body },
      retentionMs: 9,
      now: 0,
    })
    body[0] = 9
    const first = await store.claim('k', { fingerprint: 'f', owner: 'p', ...lease, now: 1 })
    if (first.state === 'completed') first.response.body[1] = 9
    const second = await store.claim('k', { fingerprint: 'f', owner: 'p', ...lease, now: 1 })
    expect(second.state === 'completed' && [...second.response.body]).toEqual([1, 2, 3])
  })

  test('a body in a pooled Node Buffer is stored as an exact copy, not a view of the pool', async () => {
    const store = new MemoryIdempotencyStore()
    await store.claim('k', { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    // A view into Node's shared 8 KiB pool (this package's sources see no Node types).
    const { Buffer } = globalThis as unknown as { Buffer: { from(text: string): Uint8Array } }
    const pooled = Buffer.from('stored')
    await store.complete('k', 'o', {
      response: { status: 200, headers: [], body: pooled },
      retentionMs: 9,
      now: 0,
    })
    pooled.fill(0x20)
    const replay = await store.claim('k', { fingerprint: 'f', owner: 'p', ...lease, now: 1 })
    const body = replay.state === 'completed' ? replay.response.body : new Uint8Array(0)
    expect(new TextDecoder().decode(body)).toBe('stored')
    expect(body.buffer.byteLength).toBe(6)
  })

  test('options are checked', () => {
    expect(() => new MemoryIdempotencyStore({ maxRecords: 0 })).toThrow(RangeError)
    expect(() => new MemoryIdempotencyStore({ maxBytes: 1.5 })).toThrow(RangeError)
  })
})
