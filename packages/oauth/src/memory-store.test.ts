import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { MemoryOAuthStore } from './memory-store.ts'
import { runOAuthStoreConformance } from './testing/index.ts'
import {
  accessToken,
  codeAt,
  DAY,
  familyAt,
  interactionAt,
  MINUTE,
  refreshToken,
} from './testing/suite.ts'

runOAuthStoreConformance('memory', () => new MemoryOAuthStore())
runOAuthStoreConformance(
  'memory (maxRecords 64: evicting all the time)',
  () => new MemoryOAuthStore({ maxRecords: 64 }),
  {
    concurrency: 20,
  },
)

const T0 = 1_700_000_000_000

describe('MemoryOAuthStore bounds', () => {
  test('the constructor refuses a maxRecords that is not a positive integer', () => {
    for (const maxRecords of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new MemoryOAuthStore({ maxRecords })).toThrow(RangeError)
    }
    expect(new MemoryOAuthStore().maxRecords).toBe(100_000)
  })

  test('each interaction, code, family, token and remembered key counts one record', async () => {
    const store = new MemoryOAuthStore()
    await store.saveInteraction(interactionAt(T0))
    await store.saveCode(codeAt(T0))
    const family = familyAt(T0)
    await store.issue(family, [accessToken(family, T0), refreshToken(family, T0)], T0)
    await store.remember('jti:1', T0 + MINUTE, T0)
    expect(store.size).toBe(6)
    // A mark made before its family exists counts one; a mark on an existing family none.
    await store.revokeFamily('not-yet', T0, T0 + DAY)
    await store.revokeFamily(family.id, T0, T0 + DAY)
    expect(store.size).toBe(7)
  })

  test('when full, expired records are swept before anything live is evicted', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 4 })
    const codes = [codeAt(T0), codeAt(T0), codeAt(T0)]
    for (const code of codes) await store.saveCode(code)
    const live = interactionAt(T0 + 2 * MINUTE)
    await store.saveInteraction(live)
    expect(store.size).toBe(4)
    // The codes ended at T0 + 1 min; the interaction saved at T0 + 2 min told the store so.
    const family = familyAt(T0 + 2 * MINUTE)
    await store.issue(family, [accessToken(family, T0 + 2 * MINUTE)], T0 + 2 * MINUTE)
    expect(store.size).toBe(3)
    expect(await store.findInteraction(live.id, T0 + 2 * MINUTE)).toEqual(live)
  })

  test('when full of live records, the one that expires soonest is evicted, the oldest among equals', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 3 })
    const family = familyAt(T0)
    const access = accessToken(family, T0)
    await store.issue(family, [access], T0) // 2 records, ends in 14 days
    const first = codeAt(T0)
    await store.saveCode(first) // ends in 1 minute
    const second = codeAt(T0)
    await store.saveCode(second) // the same end: the first (older) code goes
    expect(store.size).toBe(3)
    expect(await store.consumeCode(first.codeHash, T0)).toEqual({ state: 'absent' })
    expect((await store.consumeCode(second.codeHash, T0)).state).toBe('consumed')
    expect(await store.findToken(family.id, access.tokenHash, T0)).toBeDefined()
  })

  test('a family is evicted whole, never leaving a token without its family', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 5 })
    const short = familyAt(T0, { expiresAt: T0 + DAY })
    const tokens = [accessToken(short, T0), refreshToken(short, T0)]
    await store.issue(short, tokens, T0)
    const long = familyAt(T0)
    const kept = accessToken(long, T0)
    await store.issue(long, [kept], T0)
    expect(store.size).toBe(5)
    // Full: the family that ends first goes, with its tokens; the other stays.
    await store.remember('jti:a', T0 + 2 * DAY, T0)
    expect(store.size).toBe(3)
    expect(await store.findToken(long.id, kept.tokenHash, T0)).toEqual({
      token: kept,
      family: long,
    })
    for (const token of tokens) {
      expect(await store.findToken(short.id, token.tokenHash, T0)).toBeUndefined()
      expect(
        (await store.rotateRefresh(short.id, token.tokenHash, [], T0, { graceMs: 0 })).state,
      ).toBe('absent')
    }
  })

  test('a write into a family never evicts that family', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 3 })
    const family = familyAt(T0)
    const refresh = refreshToken(family, T0)
    await store.issue(family, [refresh], T0)
    const code = codeAt(T0)
    await store.saveCode(code)
    const next = [accessToken(family, T0 + 1), refreshToken(family, T0 + 1)]
    expect(
      await store.rotateRefresh(family.id, refresh.tokenHash, next, T0 + 1, { graceMs: 0 }),
    ).toEqual({
      state: 'rotated',
      family,
    })
    expect(store.size).toBeLessThanOrEqual(3)
    expect(await store.findToken(family.id, next[1]?.tokenHash ?? '', T0 + 1)).toBeDefined()
  })

  test('a write larger than maxRecords rejects with RangeError and saves nothing', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 2 })
    const family = familyAt(T0)
    const answer = store.issue(family, [accessToken(family, T0), refreshToken(family, T0)], T0)
    expect(answer).toBeInstanceOf(Promise)
    await expect(answer).rejects.toThrow(RangeError)
    expect(store.size).toBe(0)
  })

  test('a revoked family stays revoked while its mark is kept, though the store is full', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 4 })
    const family = familyAt(T0)
    await store.revokeFamily(family.id, T0, family.expiresAt)
    for (let index = 0; index < 3; index++) await store.remember(`jti:${index}`, T0 + MINUTE, T0)
    // Full: the short-lived keys go before the long-lived mark.
    await store.remember('jti:x', T0 + MINUTE, T0 + 1)
    expect(await store.issue(family, [accessToken(family, T0 + 1)], T0 + 1)).toBe('revoked')
  })

  test('property: whatever the operations, the store never holds more than maxRecords', async () => {
    const operation = fc.record({
      kind: fc.constantFrom('interaction', 'code', 'issue', 'rotate', 'revoke', 'remember'),
      step: fc.integer({ min: 0, max: 5 * MINUTE }),
      ttl: fc.integer({ min: 1, max: 10 * MINUTE }),
      tokens: fc.integer({ min: 0, max: 3 }),
      pick: fc.nat(),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3, max: 12 }),
        fc.array(operation, { maxLength: 60 }),
        async (maxRecords, operations) => {
          const store = new MemoryOAuthStore({ maxRecords })
          const families: { id: string; refresh: string }[] = []
          let now = T0
          for (const op of operations) {
            now += op.step
            switch (op.kind) {
              case 'interaction':
                await store.saveInteraction(interactionAt(now, { expiresAt: now + op.ttl }))
                break
              case 'code':
                await store.saveCode(codeAt(now, { expiresAt: now + op.ttl }))
                break
              case 'issue': {
                const family = familyAt(now, { expiresAt: now + op.ttl })
                const refresh = refreshToken(family, now)
                const tokens = [
                  refresh,
                  ...Array.from({ length: op.tokens }, () => accessToken(family, now)),
                ]
                if (tokens.length + 1 <= maxRecords) {
                  await store.issue(family, tokens, now)
                  families.push({ id: family.id, refresh: refresh.tokenHash })
                }
                break
              }
              case 'rotate': {
                const target = families[op.pick % Math.max(1, families.length)]
                if (target === undefined) break
                const family = familyAt(now, { id: target.id })
                await store.rotateRefresh(
                  target.id,
                  target.refresh,
                  [accessToken(family, now)],
                  now,
                  { graceMs: 0 },
                )
                break
              }
              case 'revoke':
                await store.revokeFamily(
                  families[op.pick % Math.max(1, families.length)]?.id ?? 'x',
                  now,
                  now + op.ttl,
                )
                break
              case 'remember':
                await store.remember(`k${op.pick % 5}`, now + op.ttl, now)
                break
            }
            expect(store.size).toBeLessThanOrEqual(maxRecords)
          }
        },
      ),
      { interruptAfterTimeLimit: 5_000, numRuns: 300 },
    )
  })
})
