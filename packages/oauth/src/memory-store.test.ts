import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { OAuthError } from './error.ts'
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
    const store = new MemoryOAuthStore({ maxRecords: 4 })
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
    expect(store.size).toBeLessThanOrEqual(4)
    expect(await store.findToken(family.id, next[1]?.tokenHash ?? '', T0 + 1)).toBeDefined()
  })

  test('a rotation in a full store never evicts the refresh token it rotates: a replay of it is still a reuse', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 4 })
    const family = familyAt(T0)
    // The token rotated expires before its sibling: evicting by expiry alone would pick it.
    const refresh = refreshToken(family, T0, { expiresAt: T0 + DAY })
    const sibling = refreshToken(family, T0)
    expect(await store.issue(family, [refresh, sibling], T0)).toBe('issued') // 3 records
    const next = [accessToken(family, T0 + 1), refreshToken(family, T0 + 1)]
    expect(
      (await store.rotateRefresh(family.id, refresh.tokenHash, next, T0 + 1, { graceMs: 0 })).state,
    ).toBe('rotated')
    expect(store.size).toBeLessThanOrEqual(4)
    expect(
      await store.rotateRefresh(family.id, refresh.tokenHash, [], T0 + 2, { graceMs: 0 }),
    ).toEqual({ state: 'reused', family })
    for (const token of next) {
      expect(await store.findToken(family.id, token.tokenHash, T0 + 2)).toBeUndefined()
    }
  })

  test('a rotation that cannot fit its family, the presented token and the new tokens rejects with RangeError', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 3 })
    const family = familyAt(T0)
    const refresh = refreshToken(family, T0)
    await store.issue(family, [refresh], T0)
    const next = [accessToken(family, T0 + 1), refreshToken(family, T0 + 1)]
    await expect(
      store.rotateRefresh(family.id, refresh.tokenHash, next, T0 + 1, { graceMs: 0 }),
    ).rejects.toThrow(RangeError)
    expect(await store.findToken(family.id, refresh.tokenHash, T0 + 1)).toBeDefined()
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

  test('expired records are swept in normal use, long before the store is full', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 100_000 })
    for (let index = 0; index < 1000; index++) await store.saveCode(codeAt(T0))
    expect(store.size).toBe(1000)
    // The codes ended at T0 + 1 min; later writes sweep them (amortised: after 64 writes).
    for (let index = 0; index < 64; index++) {
      await store.remember(`jti:${index}`, T0 + 2 * DAY, T0 + 2 * MINUTE)
    }
    expect(store.size).toBe(64)
  })

  test('a grant refreshed all day stays a few records: expired access tokens dropped, 16 rotated refresh tokens kept', async () => {
    const store = new MemoryOAuthStore()
    const family = familyAt(T0)
    let refresh = refreshToken(family, T0)
    await store.issue(family, [accessToken(family, T0), refresh], T0)
    const rotated: string[] = []
    let now = T0
    for (let index = 0; index < 100; index++) {
      now += 16 * MINUTE // the access token expired
      const next = [accessToken(family, now), refreshToken(family, now)] as const
      expect(
        (await store.rotateRefresh(family.id, refresh.tokenHash, next, now, { graceMs: 0 })).state,
      ).toBe('rotated')
      rotated.push(refresh.tokenHash)
      refresh = next[1]
    }
    // The family, 16 rotated refresh tokens, the live refresh and the live access token.
    expect(store.size).toBe(1 + 16 + 1 + 1)
    // A forgotten rotated token is absent (refused, nothing revoked); a kept one is a reuse.
    expect((await store.rotateRefresh(family.id, rotated[0]!, [], now, { graceMs: 0 })).state).toBe(
      'absent',
    )
    expect(await store.findToken(family.id, refresh.tokenHash, now)).toBeDefined()
    expect(
      (await store.rotateRefresh(family.id, rotated.at(-16)!, [], now, { graceMs: 0 })).state,
    ).toBe('reused')
  })

  test('a full store makes room from the writer’s own old records, never another user’s live grant', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 12 })
    const other = familyAt(T0)
    const otherToken = refreshToken(other, T0)
    await store.issue(other, [otherToken], T0) // 2 records
    const family = familyAt(T0)
    let refresh = refreshToken(family, T0)
    await store.issue(family, [refresh], T0) // 2 records
    // Each rotation adds a live access token and a refresh token and leaves a rotated one.
    for (let index = 1; index <= 6; index++) {
      const now = T0 + index * MINUTE
      const next = [accessToken(family, now), refreshToken(family, now)] as const
      expect(
        (await store.rotateRefresh(family.id, refresh.tokenHash, next, now, { graceMs: 0 })).state,
      ).toBe('rotated')
      refresh = next[1]
      expect(store.size).toBeLessThanOrEqual(12)
    }
    expect(await store.findToken(other.id, otherToken.tokenHash, T0 + 6 * MINUTE)).toBeDefined()
    expect(await store.findToken(family.id, refresh.tokenHash, T0 + 6 * MINUTE)).toBeDefined()
  })

  test('interactions have their own bound: at it saveInteraction rejects temporarily_unavailable and evicts nothing', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 16 }) // 4 interactions
    const code = codeAt(T0)
    await store.saveCode(code)
    const family = familyAt(T0)
    const access = accessToken(family, T0)
    await store.issue(family, [access], T0)
    for (let index = 0; index < 4; index++) await store.saveInteraction(interactionAt(T0))
    const refused = await store.saveInteraction(interactionAt(T0)).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(OAuthError)
    expect(refused).toMatchObject({ code: 'TEMPORARILY_UNAVAILABLE', status: 503 })
    expect(store.size).toBe(7)
    expect((await store.consumeCode(code.codeHash, T0)).state).toBe('consumed')
    expect(await store.findToken(family.id, access.tokenHash, T0)).toBeDefined()
    // Once they expire, there is room again.
    await store.saveInteraction(interactionAt(T0 + 10 * MINUTE))
  })

  test('a store full of grants refuses an interaction rather than evict a grant', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 4 })
    const family = familyAt(T0)
    const tokens = [accessToken(family, T0), accessToken(family, T0), refreshToken(family, T0)]
    await store.issue(family, tokens, T0)
    await expect(store.saveInteraction(interactionAt(T0))).rejects.toMatchObject({
      error: 'temporarily_unavailable',
    })
    for (const token of tokens)
      expect(await store.findToken(family.id, token.tokenHash, T0)).toBeDefined()
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
                // At its own bound the store refuses an interaction rather than evict.
                await store
                  .saveInteraction(interactionAt(now, { expiresAt: now + op.ttl }))
                  .catch((error: unknown) => {
                    expect(error).toMatchObject({ error: 'temporarily_unavailable' })
                  })
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
