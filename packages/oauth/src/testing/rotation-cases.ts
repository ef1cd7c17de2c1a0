/**
 * Refresh-token rotation (`rotateRefresh`): the compare-and-set, reuse detection revoking the
 * family (RFC 9700 §4.14.2), the grace window, and every answer for a token that cannot rotate.
 *
 * The order of the checks, which every store keeps: an unknown token, another family's, or
 * an access token is `absent`; an expired token or family is `expired`; a rotated token is
 * `reused-in-grace` within `graceMs` of its rotation, else `reused` (each time, even after an
 * earlier reuse revoked the family); a revoked token or family is `revoked`; else it rotates.
 *
 * @module
 */
import { expect } from 'vitest'
import type { OAuthStore, TokenRecord } from '../store.ts'
import type { SuiteContext } from './suite.ts'
import {
  accessToken,
  active,
  DAY,
  familyAt,
  MINUTE,
  pairAt,
  randomId,
  refreshToken,
  tally,
} from './suite.ts'

const NO_GRACE = { graceMs: 0 }

/** Registers the rotation cases. */
export function rotationCases(context: SuiteContext): void {
  const { it, t0, concurrency } = context

  /** A family with an access and a refresh token, issued at t0. */
  const issued = async (store: OAuthStore) => {
    const family = familyAt(t0)
    const access = accessToken(family, t0)
    const refresh = refreshToken(family, t0)
    expect(await store.issue(family, [access, refresh], t0)).toBe('issued')
    return { family, access, refresh }
  }

  it('rotating an active refresh token MUST answer rotated, save the new tokens and retire the old one', async (store) => {
    const { family, refresh } = await issued(store)
    const next = pairAt(family, t0 + MINUTE)
    expect(
      await store.rotateRefresh(family.id, refresh.tokenHash, next, t0 + MINUTE, NO_GRACE),
    ).toEqual({ state: 'rotated', family })
    expect(await active(store, refresh, t0 + MINUTE)).toBe(false)
    for (const token of next) {
      expect(await store.findToken(family.id, token.tokenHash, t0 + MINUTE)).toEqual({
        token,
        family,
      })
    }
    // The new refresh token rotates in turn.
    const after = pairAt(family, t0 + 2 * MINUTE)
    expect(
      (await store.rotateRefresh(family.id, next[1].tokenHash, after, t0 + 2 * MINUTE, NO_GRACE))
        .state,
    ).toBe('rotated')
  })

  it('a rotated refresh token older than the 16 most recent rotations answers reused or absent (a store may forget it), and the newest rotates', async (store) => {
    const { family, refresh } = await issued(store)
    let current = refresh
    const rotated: TokenRecord[] = []
    for (let i = 1; i <= 20; i++) {
      const next = pairAt(family, t0 + i)
      expect(
        (await store.rotateRefresh(family.id, current.tokenHash, next, t0 + i, NO_GRACE)).state,
      ).toBe('rotated')
      rotated.push(current)
      current = next[1]
    }
    // The first rotated token: forgotten (absent) or still known (reused, revoking).
    const first = await store.rotateRefresh(family.id, rotated[0]!.tokenHash, [], t0 + 30, NO_GRACE)
    expect(['absent', 'reused']).toContain(first.state)
    if (first.state === 'absent') {
      // The 16 most recent are never forgotten: presenting one is a reuse.
      const recent = await store.rotateRefresh(
        family.id,
        rotated[rotated.length - 16]!.tokenHash,
        [],
        t0 + 31,
        NO_GRACE,
      )
      expect(recent.state).toBe('reused')
    }
    expect(await active(store, current, t0 + 32)).toBe(false)
  })

  it('a rotated refresh token presented again MUST answer reused and revoke the whole family', async (store) => {
    const { family, access, refresh } = await issued(store)
    const next = pairAt(family, t0 + MINUTE)
    await store.rotateRefresh(family.id, refresh.tokenHash, next, t0 + MINUTE, NO_GRACE)
    const stolen = pairAt(family, t0 + 2 * MINUTE)
    expect(
      await store.rotateRefresh(family.id, refresh.tokenHash, stolen, t0 + 2 * MINUTE, NO_GRACE),
    ).toEqual({ state: 'reused', family })
    for (const token of [access, ...next, ...stolen]) {
      expect(await active(store, token, t0 + 2 * MINUTE)).toBe(false)
    }
    // The legitimate client's new refresh token is revoked with the family.
    expect(
      (await store.rotateRefresh(family.id, next[1].tokenHash, [], t0 + 3 * MINUTE, NO_GRACE))
        .state,
    ).toBe('revoked')
    // Presented once more, the old one is reported as a reuse again.
    expect(
      (await store.rotateRefresh(family.id, refresh.tokenHash, [], t0 + 3 * MINUTE, NO_GRACE))
        .state,
    ).toBe('reused')
    expect(await store.issue(family, [accessToken(family, t0 + 4 * MINUTE)], t0 + 4 * MINUTE)).toBe(
      'revoked',
    )
  })

  it('within graceMs of its rotation a reuse MUST answer reused-in-grace, saving and revoking nothing', async (store) => {
    const graceMs = 5_000
    const { family, refresh } = await issued(store)
    const rotatedAt = t0 + MINUTE
    const next = pairAt(family, rotatedAt)
    await store.rotateRefresh(family.id, refresh.tokenHash, next, rotatedAt, { graceMs })
    const racing = pairAt(family, rotatedAt + graceMs - 1)
    expect(
      await store.rotateRefresh(family.id, refresh.tokenHash, racing, rotatedAt + graceMs - 1, {
        graceMs,
      }),
    ).toEqual({ state: 'reused-in-grace' })
    for (const token of racing)
      expect(await active(store, token, rotatedAt + graceMs - 1)).toBe(false)
    for (const token of next) expect(await active(store, token, rotatedAt + graceMs - 1)).toBe(true)
    // From rotatedAt + graceMs on, it is a reuse.
    expect(
      await store.rotateRefresh(family.id, refresh.tokenHash, [], rotatedAt + graceMs, { graceMs }),
    ).toEqual({ state: 'reused', family })
    for (const token of next) expect(await active(store, token, rotatedAt + graceMs)).toBe(false)
  })

  it('a revoked refresh token, or one of a revoked family, MUST answer revoked and save nothing', async (store) => {
    const { family, refresh } = await issued(store)
    await store.revokeToken(family.id, refresh.tokenHash, t0 + 1)
    const next = pairAt(family, t0 + 2)
    expect(await store.rotateRefresh(family.id, refresh.tokenHash, next, t0 + 2, NO_GRACE)).toEqual(
      {
        state: 'revoked',
      },
    )
    for (const token of next) expect(await active(store, token, t0 + 2)).toBe(false)

    const other = await issued(store)
    await store.revokeFamily(other.family.id, t0 + 1, other.family.expiresAt)
    expect(
      await store.rotateRefresh(other.family.id, other.refresh.tokenHash, [], t0 + 2, NO_GRACE),
    ).toEqual({ state: 'revoked' })
  })

  it('an expired refresh token, or one of an expired family, MUST answer expired and save nothing', async (store) => {
    const family = familyAt(t0, { expiresAt: t0 + DAY })
    const short = refreshToken(family, t0, { expiresAt: t0 + MINUTE })
    const long = refreshToken(family, t0)
    await store.issue(family, [short, long], t0)
    const next = pairAt(family, t0 + MINUTE)
    expect(
      await store.rotateRefresh(family.id, short.tokenHash, next, short.expiresAt, NO_GRACE),
    ).toEqual({ state: 'expired' })
    for (const token of next) expect(await active(store, token, t0 + MINUTE)).toBe(false)
    // One ms before the family ends the long one rotates; at its end it is expired.
    const spare = refreshToken(family, t0)
    await store.issue(family, [spare], t0)
    expect(
      (await store.rotateRefresh(family.id, long.tokenHash, [], family.expiresAt - 1, NO_GRACE))
        .state,
    ).toBe('rotated')
    expect(
      await store.rotateRefresh(family.id, spare.tokenHash, [], family.expiresAt, NO_GRACE),
    ).toEqual({ state: 'expired' })
  })

  it('an unknown token, another family, or an access token presented as a refresh token MUST answer absent', async (store) => {
    const { family, access, refresh } = await issued(store)
    const other = await issued(store)
    const next = pairAt(family, t0 + 1)
    const absent = { state: 'absent' }
    expect(await store.rotateRefresh(family.id, randomId(32), next, t0 + 1, NO_GRACE)).toEqual(
      absent,
    )
    expect(
      await store.rotateRefresh(randomId(), refresh.tokenHash, next, t0 + 1, NO_GRACE),
    ).toEqual(absent)
    expect(
      await store.rotateRefresh(other.family.id, refresh.tokenHash, next, t0 + 1, NO_GRACE),
    ).toEqual(absent)
    expect(await store.rotateRefresh(family.id, access.tokenHash, next, t0 + 1, NO_GRACE)).toEqual(
      absent,
    )
    for (const token of next) expect(await active(store, token, t0 + 1)).toBe(false)
    // Nothing of the family changed: the access token and the refresh token are still active.
    expect(await active(store, access, t0 + 1)).toBe(true)
    expect(await active(store, refresh, t0 + 1)).toBe(true)
  })

  it(`of ${concurrency} concurrent rotations of one token exactly one MUST rotate; the others are reuses and nothing of the family stays active`, async (store) => {
    const { family, access, refresh } = await issued(store)
    const nexts = Array.from({ length: concurrency }, () => pairAt(family, t0 + 1))
    const answers = await Promise.all(
      nexts.map((next) =>
        store.rotateRefresh(family.id, refresh.tokenHash, next, t0 + 1, NO_GRACE),
      ),
    )
    expect(tally(answers)).toEqual({ rotated: 1, reused: concurrency - 1 })
    const all: TokenRecord[] = [access, refresh, ...nexts.flat()]
    for (const token of all) expect(await active(store, token, t0 + 2)).toBe(false)
  })

  it(`of ${concurrency} concurrent rotations within the grace window exactly one MUST rotate; the others answer reused-in-grace`, async (store) => {
    const { family, refresh } = await issued(store)
    const nexts = Array.from({ length: concurrency }, () => pairAt(family, t0 + 1))
    const answers = await Promise.all(
      nexts.map((next) =>
        store.rotateRefresh(family.id, refresh.tokenHash, next, t0 + 1, { graceMs: MINUTE }),
      ),
    )
    expect(tally(answers)).toEqual({ rotated: 1, 'reused-in-grace': concurrency - 1 })
    const winner = nexts[answers.findIndex((answer) => answer.state === 'rotated')] ?? []
    for (const next of nexts) {
      for (const token of next) expect(await active(store, token, t0 + 2)).toBe(next === winner)
    }
  })
}
