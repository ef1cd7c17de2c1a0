/**
 * The store contract of `store.ts`, operation by operation: claims, leases, owners, retention,
 * recovery points, atomicity under concurrent claims.
 *
 * @module
 */
import { expect } from 'vitest'
import type { StoredResponse } from '../store.ts'
import type { SuiteContext } from './suite.ts'
import { allBytes, LEASE, plain, RETENTION, sample } from './suite.ts'

/** Registers the store-operation cases. */
export function storeOperationCases(context: SuiteContext): void {
  const { it, key, t0, concurrency } = context
  it('every operation MUST return a Promise, whatever it answers', async (store) => {
    const k = key()
    const promised = <T>(answer: Promise<T>): Promise<T> => {
      expect(answer).toBeInstanceOf(Promise)
      return answer
    }
    const claim = { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 }
    expect((await promised(store.claim(k, claim))).state).toBe('claimed')
    expect((await promised(store.claim(k, { ...claim, owner: 'b' }))).state).toBe('in-flight')
    expect((await promised(store.claim(k, { ...claim, owner: 'x', fingerprint: 'g' }))).state).toBe(
      'mismatch',
    )
    const point = { recoveryPoint: 'p', retentionMs: RETENTION, now: t0 }
    expect(await promised(store.checkpoint(k, 'a', point))).toBe(true)
    expect(await promised(store.checkpoint(k, 'b', point))).toBe(false)
    const completion = { response: sample(), retentionMs: RETENTION, now: t0 }
    expect(await promised(store.complete(k, 'b', completion))).toBe(false)
    expect(await promised(store.complete(k, 'a', completion))).toBe(true)
    expect((await promised(store.claim(k, { ...claim, owner: 'c' }))).state).toBe('completed')
    expect(await promised(store.release(k, 'a'))).toBe(false)
    const other = key()
    await promised(store.claim(other, claim))
    expect(await promised(store.release(other, 'a'))).toBe(true)
  })

  it('claim of an absent key MUST answer claimed', async (store) => {
    const result = await store.claim(key(), {
      fingerprint: 'f',
      owner: 'a',
      leaseMs: LEASE,
      now: t0,
    })
    expect(result.state).toBe('claimed')
    expect(result.state === 'claimed' && result.recoveryPoint).toBeFalsy()
  })

  it('a claim during a live lease MUST answer in-flight (same fingerprint) or mismatch', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    expect(
      await store.claim(k, {
        fingerprint: 'f',
        owner: 'b',
        leaseMs: LEASE,
        now: t0 + LEASE - 1,
      }),
    ).toEqual({
      state: 'in-flight',
      leaseExpiresAt: t0 + LEASE,
    })
    expect(
      await store.claim(k, { fingerprint: 'g', owner: 'b', leaseMs: LEASE, now: t0 + 1 }),
    ).toEqual({
      state: 'mismatch',
    })
  })

  it('complete by the owner MUST store the response byte for byte', async (store) => {
    const k = key()
    const response = sample(allBytes(256 * 1024))
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    expect(await store.complete(k, 'a', { response, retentionMs: RETENTION, now: t0 + 10 })).toBe(
      true,
    )
    const replay = await store.claim(k, {
      fingerprint: 'f',
      owner: 'b',
      leaseMs: LEASE,
      now: t0 + 20,
    })
    expect(replay.state).toBe('completed')
    if (replay.state !== 'completed') return
    expect(plain(replay.response)).toEqual(plain(response))
    expect(replay.response.body).toBeInstanceOf(Uint8Array)
  })

  it('a body given as a view into a larger buffer MUST be stored as the view, not its buffer', async (store) => {
    const k = key()
    // What the middleware may hand over: a slice of Node's Buffer pool, say.
    const pool = allBytes(4096)
    const response = sample(pool.subarray(1000, 1300))
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    expect(await store.complete(k, 'a', { response, retentionMs: RETENTION, now: t0 })).toBe(true)
    // The caller's buffer is reused afterwards: the stored bytes must not follow.
    const expected = plain(response)
    pool.fill(0)
    const replay = await store.claim(k, { fingerprint: 'f', owner: 'b', leaseMs: LEASE, now: t0 })
    expect(replay.state === 'completed' && plain(replay.response)).toEqual(expected)
  })

  it('an empty body MUST round-trip as an empty body', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    const response: StoredResponse = { status: 204, headers: [], body: new Uint8Array(0) }
    expect(await store.complete(k, 'a', { response, retentionMs: RETENTION, now: t0 })).toBe(true)
    const replay = await store.claim(k, {
      fingerprint: 'f',
      owner: 'b',
      leaseMs: LEASE,
      now: t0 + 1,
    })
    expect(replay.state === 'completed' && plain(replay.response)).toEqual(plain(response))
  })

  it('a completed key with another fingerprint MUST answer mismatch', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    await store.complete(k, 'a', { response: sample(), retentionMs: RETENTION, now: t0 })
    expect(
      await store.claim(k, { fingerprint: 'g', owner: 'b', leaseMs: LEASE, now: t0 + 1 }),
    ).toEqual({
      state: 'mismatch',
    })
  })

  it('a completed record MUST live until its retention ends, and no longer', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    await store.complete(k, 'a', { response: sample(), retentionMs: RETENTION, now: t0 + 5 })
    const before = await store.claim(k, {
      fingerprint: 'f',
      owner: 'b',
      leaseMs: LEASE,
      now: t0 + 5 + RETENTION - 1,
    })
    expect(before.state).toBe('completed')
    // Expired at exactly now + retention: `expiresAt <= now` is expired.
    const after = await store.claim(k, {
      fingerprint: 'g',
      owner: 'c',
      leaseMs: LEASE,
      now: t0 + 5 + RETENTION,
    })
    expect(after.state).toBe('claimed')
  })

  it('after a lease ends a new owner MUST claim; the stale owner MUST NOT complete, checkpoint or release', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'stale', leaseMs: LEASE, now: t0 })
    const takeover = await store.claim(k, {
      fingerprint: 'f',
      owner: 'fresh',
      leaseMs: LEASE,
      now: t0 + LEASE,
    })
    expect(takeover.state).toBe('claimed')
    const late = {
      response: sample(new Uint8Array([1])),
      retentionMs: RETENTION,
      now: t0 + LEASE + 1,
    }
    expect(await store.complete(k, 'stale', late)).toBe(false)
    expect(
      await store.checkpoint(k, 'stale', {
        recoveryPoint: 'x',
        retentionMs: RETENTION,
        now: t0 + LEASE + 1,
      }),
    ).toBe(false)
    expect(await store.release(k, 'stale')).toBe(false)
    // The fresh owner's claim is untouched.
    expect(
      (
        await store.claim(k, {
          fingerprint: 'f',
          owner: 'other',
          leaseMs: LEASE,
          now: t0 + LEASE + 2,
        })
      ).state,
    ).toBe('in-flight')
    const fresh = {
      response: sample(new Uint8Array([2])),
      retentionMs: RETENTION,
      now: t0 + LEASE + 3,
    }
    expect(await store.complete(k, 'fresh', fresh)).toBe(true)
    const replay = await store.claim(k, {
      fingerprint: 'f',
      owner: 'other',
      leaseMs: LEASE,
      now: t0 + LEASE + 4,
    })
    expect(replay.state === 'completed' && [...replay.response.body]).toEqual([2])
  })

  it('a lease that ended with no checkpoint MUST free the key for any request', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    const other = await store.claim(k, {
      fingerprint: 'g',
      owner: 'b',
      leaseMs: LEASE,
      now: t0 + LEASE,
    })
    expect(other.state).toBe('claimed')
  })

  it('complete after the lease ended MUST fail even when no one took over', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    expect(
      await store.complete(k, 'a', {
        response: sample(),
        retentionMs: RETENTION,
        now: t0 + LEASE,
      }),
    ).toBe(false)
    expect(
      (await store.claim(k, { fingerprint: 'f', owner: 'b', leaseMs: LEASE, now: t0 + LEASE }))
        .state,
    ).toBe('claimed')
  })

  it('after its lease ended, an owner MUST NOT complete or checkpoint a checkpointed claim', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    await store.checkpoint(k, 'a', { recoveryPoint: 'p1', retentionMs: RETENTION, now: t0 })
    const late = t0 + LEASE
    expect(
      await store.checkpoint(k, 'a', {
        recoveryPoint: 'p2',
        retentionMs: RETENTION,
        now: late,
      }),
    ).toBe(false)
    expect(
      await store.complete(k, 'a', { response: sample(), retentionMs: RETENTION, now: late }),
    ).toBe(false)
    expect(
      await store.claim(k, { fingerprint: 'f', owner: 'b', leaseMs: LEASE, now: late }),
    ).toEqual({
      state: 'claimed',
      recoveryPoint: 'p1',
    })
  })

  it('release by the owner MUST free the key; by another owner MUST NOT', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    expect(await store.release(k, 'b')).toBe(false)
    expect(
      (await store.claim(k, { fingerprint: 'f', owner: 'c', leaseMs: LEASE, now: t0 + 1 })).state,
    ).toBe('in-flight')
    expect(await store.release(k, 'a')).toBe(true)
    expect(
      (await store.claim(k, { fingerprint: 'g', owner: 'c', leaseMs: LEASE, now: t0 + 2 })).state,
    ).toBe('claimed')
  })

  it('release and complete MUST NOT change a completed record', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    await store.complete(k, 'a', {
      response: sample(new Uint8Array([1])),
      retentionMs: RETENTION,
      now: t0,
    })
    expect(await store.release(k, 'a')).toBe(false)
    expect(
      await store.complete(k, 'a', {
        response: sample(new Uint8Array([9])),
        retentionMs: RETENTION,
        now: t0 + 1,
      }),
    ).toBe(false)
    const replay = await store.claim(k, {
      fingerprint: 'f',
      owner: 'b',
      leaseMs: LEASE,
      now: t0 + 2,
    })
    expect(replay.state === 'completed' && [...replay.response.body]).toEqual([1])
  })

  it('release after a checkpoint MUST keep the record resumable by the same fingerprint only', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    expect(
      await store.checkpoint(k, 'a', {
        recoveryPoint: 'charged',
        retentionMs: RETENTION,
        now: t0 + 1,
      }),
    ).toBe(true)
    expect(await store.release(k, 'a')).toBe(true)
    expect(
      await store.claim(k, { fingerprint: 'g', owner: 'b', leaseMs: LEASE, now: t0 + 2 }),
    ).toEqual({ state: 'mismatch' })
    expect(
      await store.claim(k, { fingerprint: 'f', owner: 'c', leaseMs: LEASE, now: t0 + 3 }),
    ).toEqual({
      state: 'claimed',
      recoveryPoint: 'charged',
    })
    // The resumed claim is live: its owner completes it, a duplicate is in flight.
    expect(
      (await store.claim(k, { fingerprint: 'f', owner: 'd', leaseMs: LEASE, now: t0 + 4 })).state,
    ).toBe('in-flight')
    expect(
      await store.complete(k, 'c', { response: sample(), retentionMs: RETENTION, now: t0 + 5 }),
    ).toBe(true)
    expect(
      (await store.claim(k, { fingerprint: 'f', owner: 'd', leaseMs: LEASE, now: t0 + 6 })).state,
    ).toBe('completed')
  })

  it('a checkpointed claim whose owner crashed MUST be resumable after its lease, until retention ends', async (store) => {
    const k = key()
    await store.claim(k, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    await store.checkpoint(k, 'a', { recoveryPoint: 'sent', retentionMs: RETENTION, now: t0 })
    expect(
      (
        await store.claim(k, {
          fingerprint: 'f',
          owner: 'b',
          leaseMs: LEASE,
          now: t0 + LEASE - 1,
        })
      ).state,
    ).toBe('in-flight')
    expect(
      await store.claim(k, { fingerprint: 'f', owner: 'b', leaseMs: LEASE, now: t0 + LEASE }),
    ).toEqual({
      state: 'claimed',
      recoveryPoint: 'sent',
    })
    expect(await store.release(k, 'b')).toBe(true)
    // Past retention the record is gone: any request claims it afresh.
    expect(
      await store.claim(k, {
        fingerprint: 'g',
        owner: 'c',
        leaseMs: LEASE,
        now: t0 + RETENTION,
      }),
    ).toEqual({
      state: 'claimed',
    })
  })

  it(`${concurrency} concurrent claims of one key MUST give exactly one claimed`, async (store) => {
    const k = key()
    const results = await Promise.all(
      Array.from({ length: concurrency }, (_, index) =>
        store.claim(k, { fingerprint: 'f', owner: `o${index}`, leaseMs: LEASE, now: t0 }),
      ),
    )
    expect(results.filter((result) => result.state === 'claimed')).toHaveLength(1)
    expect(results.filter((result) => result.state === 'in-flight')).toHaveLength(concurrency - 1)
  })

  it('keys MUST be independent', async (store) => {
    const [a, b] = [key(), key()]
    await store.claim(a, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0 })
    expect(
      (await store.claim(b, { fingerprint: 'g', owner: 'b', leaseMs: LEASE, now: t0 })).state,
    ).toBe('claimed')
    await store.complete(b, 'b', { response: sample(), retentionMs: RETENTION, now: t0 })
    expect(
      (await store.claim(a, { fingerprint: 'f', owner: 'c', leaseMs: LEASE, now: t0 })).state,
    ).toBe('in-flight')
  })

  it('a claim that names its scope MUST be answered as one that does not (the scope is a hint)', async (store) => {
    const k = key()
    const claim = { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: t0, scope: 'sub:alice' }
    expect((await store.claim(k, claim)).state).toBe('claimed')
    expect((await store.claim(k, { ...claim, owner: 'b' })).state).toBe('in-flight')
    expect((await store.claim(k, { ...claim, owner: 'b', scope: undefined })).state).toBe(
      'in-flight',
    )
    expect((await store.claim(k, { ...claim, owner: 'b', fingerprint: 'g' })).state).toBe(
      'mismatch',
    )
    const response = sample()
    expect(await store.complete(k, 'a', { response, retentionMs: RETENTION, now: t0 })).toBe(true)
    const replay = await store.claim(k, { ...claim, owner: 'c' })
    expect(replay.state === 'completed' && replay.response.status).toBe(response.status)
  })
}
