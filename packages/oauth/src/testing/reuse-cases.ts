/**
 * Reuse detection at its edges: a grace window of 0 whatever the caller's clock says, an
 * expired refresh token that `findToken` has already seen, the revocation mark a reuse leaves
 * until the family's end, and a rotation racing a `revokeFamily`.
 *
 * @module
 */
import { expect } from 'vitest'
import type { OAuthStore, TokenRecord } from '../store.ts'
import type { SuiteContext } from './suite.ts'
import { accessToken, active, DAY, familyAt, MINUTE, pairAt, refreshToken } from './suite.ts'

const NO_GRACE = { graceMs: 0 }

/** Registers the reuse-detection edge cases. */
export function reuseCases(context: SuiteContext): void {
  const { it, t0, concurrency } = context

  /** A family with an access and a refresh token, issued at t0. */
  const issued = async (store: OAuthStore) => {
    const family = familyAt(t0)
    const access = accessToken(family, t0)
    const refresh = refreshToken(family, t0)
    expect(await store.issue(family, [access, refresh], t0)).toBe('issued')
    return { family, access, refresh }
  }

  it('with graceMs 0 a rotated token presented again MUST answer reused and revoke the family, even at a now before its rotation (instances whose clocks differ)', async (store) => {
    const { family, access, refresh } = await issued(store)
    const rotatedAt = t0 + MINUTE
    const next = pairAt(family, rotatedAt)
    expect(
      (await store.rotateRefresh(family.id, refresh.tokenHash, next, rotatedAt, NO_GRACE)).state,
    ).toBe('rotated')
    const racing = pairAt(family, rotatedAt - 1)
    expect(
      await store.rotateRefresh(family.id, refresh.tokenHash, racing, rotatedAt - 1, NO_GRACE),
    ).toEqual({ state: 'reused', family })
    for (const token of [access, ...next, ...racing]) {
      expect(await active(store, token, rotatedAt)).toBe(false)
    }
    expect(await store.issue(family, [accessToken(family, rotatedAt)], rotatedAt)).toBe('revoked')
  })

  it('an expired refresh token MUST answer expired after findToken saw it expired (reading never deletes)', async (store) => {
    const family = familyAt(t0, { expiresAt: t0 + DAY })
    const short = refreshToken(family, t0, { expiresAt: t0 + MINUTE })
    expect(await store.issue(family, [short], t0)).toBe('issued')
    expect(await store.findToken(family.id, short.tokenHash, short.expiresAt)).toBeUndefined()
    const next = pairAt(family, short.expiresAt)
    expect(
      await store.rotateRefresh(family.id, short.tokenHash, next, short.expiresAt, NO_GRACE),
    ).toEqual({ state: 'expired' })
    for (const token of next) expect(await active(store, token, short.expiresAt)).toBe(false)
  })

  it('after a reuse the revocation mark MUST be kept until the end of the family', async (store) => {
    const { family, refresh } = await issued(store)
    await store.rotateRefresh(
      family.id,
      refresh.tokenHash,
      pairAt(family, t0 + 1),
      t0 + 1,
      NO_GRACE,
    )
    expect(
      (await store.rotateRefresh(family.id, refresh.tokenHash, [], t0 + 2, NO_GRACE)).state,
    ).toBe('reused')
    const late = accessToken(family, family.expiresAt - 1)
    expect(await store.issue(family, [late], family.expiresAt - 1)).toBe('revoked')
    expect(await active(store, late, family.expiresAt - 1)).toBe(false)
  })

  it(`${concurrency} rotations of one token racing a revokeFamily MUST leave nothing of the family active, whatever the interleaving`, async (store) => {
    const { family, access, refresh } = await issued(store)
    const nexts = Array.from({ length: concurrency }, () => pairAt(family, t0 + 1))
    const rotate = (next: readonly TokenRecord[]) =>
      store.rotateRefresh(family.id, refresh.tokenHash, next, t0 + 1, NO_GRACE)
    const half = concurrency >> 1
    const answers = await Promise.all([
      ...nexts.slice(0, half).map(rotate),
      store.revokeFamily(family.id, t0 + 1, family.expiresAt).then(() => undefined),
      ...nexts.slice(half).map(rotate),
    ])
    for (const answer of answers) {
      if (answer !== undefined) expect(['rotated', 'reused', 'revoked']).toContain(answer.state)
    }
    expect(answers.filter((answer) => answer?.state === 'rotated').length).toBeLessThanOrEqual(1)
    for (const token of [access, refresh, ...nexts.flat()]) {
      expect(await active(store, token, t0 + 2)).toBe(false)
    }
    expect(await store.issue(family, [accessToken(family, t0 + 2)], t0 + 2)).toBe('revoked')
  })
}
