import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { BLOCK_BYTES, MIN_BYTES_FOR_BLOCKS, SHARED_MAX } from './internal/body-blocks.ts'
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

  test('an expired record goes before a completed one still within its retention', async () => {
    const evicted: string[] = []
    const store = new MemoryIdempotencyStore({ maxRecords: 3, onEvict: (key) => evicted.push(key) })
    // a, b: completed, kept for an hour; x: claimed last, its lease (1 s) ends without
    // completion. The sweep before the next claim visits a and b only.
    for (const key of ['a', 'b']) {
      await store.claim(key, { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
      await store.complete(key, 'o', { response: response(1), retentionMs: 3_600_000, now: 0 })
    }
    await store.claim('x', { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    expect(
      (await store.claim('c', { fingerprint: 'f', owner: 'o', ...lease, now: 20_000 })).state,
    ).toBe('claimed')
    expect(evicted).toEqual([])
    expect(
      (await store.claim('a', { fingerprint: 'f', owner: 'p', ...lease, now: 20_000 })).state,
    ).toBe('completed')
  })

  test('live claims are never evicted: when only they remain, claim answers store-full (fail closed)', async () => {
    const store = new MemoryIdempotencyStore({ maxRecords: 2 })
    await store.claim('a', { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    await store.claim('b', { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    expect(await store.claim('c', { fingerprint: 'f', owner: 'o', ...lease, now: 1 })).toEqual({
      state: 'store-full',
    })
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

describe('MemoryIdempotencyStore bodies', () => {
  const complete = async (store: MemoryIdempotencyStore, key: string, body: Uint8Array) => {
    await store.claim(key, { fingerprint: 'f', owner: 'o', ...lease, now: 0 })
    await store.complete(key, 'o', {
      response: { status: 200, headers: [['x', key]], body },
      retentionMs: 60_000,
      now: 0,
    })
  }
  const replayOf = async (store: MemoryIdempotencyStore, key: string) => {
    const result = await store.claim(key, { fingerprint: 'f', owner: 'p', ...lease, now: 1 })
    if (result.state !== 'completed') throw new Error(`${key}: ${result.state}`)
    return result.response
  }

  test('small bodies share blocks without touching one another; each replay has a buffer of its own', async () => {
    const store = new MemoryIdempotencyStore()
    // 100 bodies of 1..100 bytes: several blocks, many records per block.
    for (let index = 1; index <= 100; index++) {
      await complete(store, `k${index}`, new Uint8Array(index).fill(index))
    }
    for (let index = 1; index <= 100; index++) {
      const { body, headers } = await replayOf(store, `k${index}`)
      expect(headers).toEqual([['x', `k${index}`]])
      expect(body).toEqual(new Uint8Array(index).fill(index))
      // Not a view of a shared block: the caller may use body.buffer.
      expect(body.byteOffset).toBe(0)
      expect(body.buffer.byteLength).toBe(index)
    }
  })

  test('a replay changed by its caller does not change the record; nor does the completed input', async () => {
    const store = new MemoryIdempotencyStore()
    const input = new Uint8Array([1, 2, 3])
    await complete(store, 'k', input)
    input.fill(9)
    const first = await replayOf(store, 'k')
    first.body.fill(7)
    expect((await replayOf(store, 'k')).body).toEqual(new Uint8Array([1, 2, 3]))
  })

  test('a body larger than a shared block is stored whole', async () => {
    const store = new MemoryIdempotencyStore()
    const body = new Uint8Array(20_000).map((_, index) => index % 251)
    await complete(store, 'big', body)
    await complete(store, 'small', new Uint8Array([5]))
    expect((await replayOf(store, 'big')).body).toEqual(body)
    expect((await replayOf(store, 'small')).body).toEqual(new Uint8Array([5]))
  })
})

describe('MemoryIdempotencyStore expiry bound', () => {
  test('random claims, completions and time: an eviction never leaves an expired record behind', async () => {
    // Mostly claims, often at capacity; short leases, completions kept longer, time moving.
    const step = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('claim' as const),
          leaseMs: fc.integer({ min: 1, max: 50 }),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant('complete' as const),
          pick: fc.nat(),
          retentionMs: fc.integer({ min: 1, max: 400 }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('advance' as const),
          ms: fc.integer({ min: 0, max: 60 }),
        }),
      },
    )
    let claims = 0
    let evictions = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 100, maxLength: 600 }),
        fc.integer({ min: 8, max: 64 }),
        async (steps, max) => {
          const evicted: string[] = []
          const store = new MemoryIdempotencyStore({
            maxRecords: max,
            onEvict: (key) => evicted.push(key),
          })
          // The model: every record not yet evicted, with its logical end.
          const ends = new Map<string, { end: number; claimed: boolean }>()
          let now = 0
          let next = 0
          for (const action of steps) {
            if (action.kind === 'advance') now += action.ms
            else if (action.kind === 'claim') {
              const key = `k${next++}`
              const before = evicted.length
              const answer = await store.claim(key, {
                fingerprint: 'f',
                owner: 'o',
                leaseMs: action.leaseMs,
                now,
              })
              if (answer.state === 'store-full') continue // only live claims: nothing changed
              expect(answer).toEqual({ state: 'claimed' })
              claims++
              ends.set(key, { end: now + action.leaseMs, claimed: true })
              for (const key of evicted.slice(before)) ends.delete(key)
              if (evicted.length > before) {
                evictions++
                // Completed records were evicted only once every expired one was gone.
                for (const [key, record] of ends) {
                  if (record.end <= now) ends.delete(key)
                }
                expect(store.size).toBe(ends.size)
              }
            } else {
              const live = [...ends].filter(([, record]) => record.claimed && record.end > now)
              const chosen = live[action.pick % Math.max(1, live.length)]
              if (chosen === undefined) continue
              const [key] = chosen
              const done = await store.complete(key, 'o', {
                response: { status: 200, headers: [], body: new Uint8Array([1]) },
                retentionMs: action.retentionMs,
                now,
              })
              expect(done).toBe(true)
              ends.set(key, { end: now + action.retentionMs, claimed: false })
            }
          }
        },
      ),
      { numRuns: 200 },
    )
    // The property ran on claims that were taken and evictions that happened.
    expect(claims).toBeGreaterThan(1000)
    expect(evictions).toBeGreaterThan(10)
  })
})

describe('MemoryIdempotencyStore maxBytes is a true bound', () => {
  const claimed = { fingerprint: 'f', owner: 'o', leaseMs: 1000 }

  test('a body in a shared block counts the whole block; a larger one its own bytes', async () => {
    const store = new MemoryIdempotencyStore()
    await store.claim('small', { ...claimed, now: 0 })
    await store.complete('small', 'o', {
      response: { status: 200, headers: [['x', 'yz']], body: new Uint8Array(10) },
      retentionMs: 60_000,
      now: 0,
    })
    expect(store.bytes).toBe(BLOCK_BYTES + 3)
    // A second small body goes into the same block: nothing more held but its header text.
    await store.claim('small-2', { ...claimed, now: 0 })
    await store.complete('small-2', 'o', { response: response(10), retentionMs: 60_000, now: 0 })
    expect(store.bytes).toBe(BLOCK_BYTES + 3)
    await store.claim('large', { ...claimed, now: 0 })
    await store.complete('large', 'o', {
      response: response(SHARED_MAX + 1),
      retentionMs: 60_000,
      now: 0,
    })
    expect(store.bytes).toBe(BLOCK_BYTES + 3 + SHARED_MAX + 1)
  })

  test('long-lived records each pinning a block among short-lived ones: the blocks they keep stay within maxBytes', async () => {
    // The pattern that made shared blocks exceed maxBytes when only bodies' own bytes counted:
    // each block gets one long-lived 1-byte body, then short-lived bodies that fill it and
    // expire. Every long-lived record then keeps a whole block for one byte.
    const maxBytes = MIN_BYTES_FOR_BLOCKS
    const evicted: string[] = []
    const store = new MemoryIdempotencyStore({
      maxBytes,
      maxRecords: 100_000,
      onEvict: (key) => evicted.push(key),
    })
    const fillers = [SHARED_MAX, SHARED_MAX, SHARED_MAX, BLOCK_BYTES - 1 - 3 * SHARED_MAX]
    let now = 0
    let next = 0
    const complete = async (key: string, bytes: number, retentionMs: number) => {
      await store.claim(key, { ...claimed, now })
      expect(await store.complete(key, 'o', { response: response(bytes), retentionMs, now })).toBe(
        true,
      )
    }
    const rounds = 1000
    for (let round = 0; round < rounds; round++) {
      await complete(`long-${round}`, 1, 24 * 60 * 60 * 1000)
      for (const bytes of fillers) await complete(`short-${next++}`, bytes, 1)
      now += 2 // the fillers expire
      expect(store.bytes).toBeLessThanOrEqual(maxBytes)
    }
    // Each long-lived record still held pins a block of its own: at most maxBytes of them.
    let held = 0
    for (let round = 0; round < rounds; round++) {
      const result = await store.claim(`long-${round}`, { ...claimed, owner: 'p', now })
      if (result.state === 'completed') held++
    }
    expect(held).toBeGreaterThan(0)
    expect(held * BLOCK_BYTES).toBeLessThanOrEqual(maxBytes)
    // The others were evicted, oldest first, and reported.
    expect(evicted.filter((key) => key.startsWith('long-'))[0]).toBe('long-0')
  })

  test('with a maxBytes below 64 blocks every body has a buffer of its own, counted by its length', async () => {
    const store = new MemoryIdempotencyStore({ maxBytes: MIN_BYTES_FOR_BLOCKS - 1 })
    for (let index = 0; index < 10; index++) {
      await store.claim(`k${index}`, { ...claimed, now: 0 })
      await store.complete(`k${index}`, 'o', {
        response: response(10),
        retentionMs: 60_000,
        now: 0,
      })
    }
    expect(store.bytes).toBe(100)
  })

  test('every operation answers a promise; a failure is a rejection, never a throw', async () => {
    const store = new MemoryIdempotencyStore({ maxRecords: 1, maxBytes: 100 })
    const claim = store.claim('a', { ...claimed, now: 0 })
    expect(claim).toBeInstanceOf(Promise)
    await claim
    const full = store.claim('b', { ...claimed, now: 0 })
    expect(full).toBeInstanceOf(Promise)
    expect(await full).toEqual({ state: 'store-full' })
    const over = store.complete('a', 'o', {
      response: response(101),
      retentionMs: 1,
      now: 0,
    })
    expect(over).toBeInstanceOf(Promise)
    await expect(over).rejects.toThrow(/maxBytes/)
    expect(
      store.checkpoint('a', 'o', { recoveryPoint: 'p', retentionMs: 1, now: 0 }),
    ).toBeInstanceOf(Promise)
    expect(store.release('a', 'o')).toBeInstanceOf(Promise)
  })
})
