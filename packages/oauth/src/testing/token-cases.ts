/**
 * Families and tokens: issue, findToken (expiry of the token and of its family, kinds),
 * revokeToken (one token), revokeFamily (every token, present and future, the mark kept until
 * `retainUntil`).
 *
 * @module
 */
import { expect } from 'vitest'
import type { SuiteContext } from './suite.ts'
import { accessToken, active, DAY, familyAt, MINUTE, randomId, refreshToken } from './suite.ts'

/** Registers the issue, findToken and revocation cases. */
export function tokenCases(context: SuiteContext): void {
  const { it, t0, concurrency } = context

  it('issued tokens MUST be found with their family, kinds and fields as saved', async (store) => {
    const family = familyAt(t0)
    const access = accessToken(family, t0, {
      confirmation: { jkt: '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I' },
    })
    const refresh = refreshToken(family, t0)
    expect(await store.issue(family, [access, refresh], t0)).toBe('issued')
    expect(await store.findToken(family.id, access.tokenHash, t0 + 1)).toEqual({
      token: access,
      family,
    })
    const found = await store.findToken(family.id, refresh.tokenHash, t0 + 1)
    expect(found).toEqual({ token: refresh, family })
    expect(found?.token.kind).toBe('refresh_token')
    expect(found?.token.confirmation).toBeUndefined()
  })

  it('a token with its own, narrower scopes MUST be found with them; one without has none', async (store) => {
    const family = familyAt(t0)
    const narrow = accessToken(family, t0, { scopes: ['read:orders'] })
    const plain = accessToken(family, t0)
    expect(await store.issue(family, [narrow, plain], t0)).toBe('issued')
    const found = await store.findToken(family.id, narrow.tokenHash, t0)
    expect(found).toEqual({ token: narrow, family })
    expect(found?.token.scopes).toEqual(['read:orders'])
    expect((await store.findToken(family.id, plain.tokenHash, t0))?.token.scopes).toBeUndefined()
  })

  it('a client-credentials family (no subject, no authTime) round-trips', async (store) => {
    const family = familyAt(t0, { subject: undefined, authTime: undefined, scopes: [] })
    const access = accessToken(family, t0)
    expect(await store.issue(family, [access], t0)).toBe('issued')
    const found = await store.findToken(family.id, access.tokenHash, t0)
    expect(found).toEqual({ token: access, family })
    expect(found?.family.subject).toBeUndefined()
    expect(found?.family.authTime).toBeUndefined()
  })

  it('findToken MUST answer undefined for an unknown token, family, or a token asked of another family', async (store) => {
    const family = familyAt(t0)
    const other = familyAt(t0)
    const access = accessToken(family, t0)
    await store.issue(family, [access], t0)
    await store.issue(other, [accessToken(other, t0)], t0)
    expect(await store.findToken(family.id, randomId(32), t0)).toBeUndefined()
    expect(await store.findToken(randomId(), access.tokenHash, t0)).toBeUndefined()
    expect(await store.findToken(other.id, access.tokenHash, t0)).toBeUndefined()
  })

  it('a token MUST be active until its expiresAt and inactive from it on', async (store) => {
    const family = familyAt(t0)
    const access = accessToken(family, t0)
    const refresh = refreshToken(family, t0)
    await store.issue(family, [access, refresh], t0)
    expect(await active(store, access, access.expiresAt - 1)).toBe(true)
    expect(await active(store, access, access.expiresAt)).toBe(false)
    // The family and its refresh token live on.
    expect(await active(store, refresh, access.expiresAt)).toBe(true)
  })

  it('a token MUST be inactive once its family expired', async (store) => {
    const family = familyAt(t0, { expiresAt: t0 + DAY })
    // A token claiming to outlive its family (the server never issues one): the family decides.
    const refresh = refreshToken(family, t0, { expiresAt: t0 + 2 * DAY })
    const access = accessToken(family, t0, { expiresAt: family.expiresAt })
    await store.issue(family, [access, refresh], t0)
    expect(await active(store, refresh, family.expiresAt - 1)).toBe(true)
    expect(await active(store, access, family.expiresAt - 1)).toBe(true)
    expect(await active(store, refresh, family.expiresAt)).toBe(false)
    expect(await active(store, access, family.expiresAt)).toBe(false)
  })

  it('issue into an existing family MUST add the tokens and leave the family as it was', async (store) => {
    const family = familyAt(t0)
    const first = accessToken(family, t0)
    await store.issue(family, [first], t0)
    const changed = { ...family, scopes: ['admin:everything'], expiresAt: family.expiresAt + DAY }
    const second = accessToken(family, t0 + MINUTE)
    expect(await store.issue(changed, [second], t0 + MINUTE)).toBe('issued')
    expect(await store.findToken(family.id, second.tokenHash, t0 + MINUTE)).toEqual({
      token: second,
      family,
    })
    expect(await active(store, first, t0 + MINUTE)).toBe(true)
  })

  it('revokeToken MUST revoke that token only; the rest of its family stays active', async (store) => {
    const family = familyAt(t0)
    const access = accessToken(family, t0)
    const sibling = accessToken(family, t0)
    const refresh = refreshToken(family, t0)
    await store.issue(family, [access, sibling, refresh], t0)
    expect(await store.revokeToken(family.id, access.tokenHash, t0 + 1)).toBeUndefined()
    expect(await active(store, access, t0 + 2)).toBe(false)
    expect(await active(store, sibling, t0 + 2)).toBe(true)
    expect(await active(store, refresh, t0 + 2)).toBe(true)
    // Unknown tokens and families: a no-op.
    await store.revokeToken(family.id, randomId(32), t0 + 3)
    await store.revokeToken(randomId(), access.tokenHash, t0 + 3)
    expect(await active(store, sibling, t0 + 3)).toBe(true)
  })

  it('revokeFamily MUST make every token of the family inactive, and only of that family', async (store) => {
    const family = familyAt(t0)
    const other = familyAt(t0)
    const tokens = [accessToken(family, t0), refreshToken(family, t0)]
    const others = [accessToken(other, t0), refreshToken(other, t0)]
    await store.issue(family, tokens, t0)
    await store.issue(other, others, t0)
    await store.revokeFamily(family.id, t0 + 1, family.expiresAt)
    for (const token of tokens) expect(await active(store, token, t0 + 2)).toBe(false)
    for (const token of others) expect(await active(store, token, t0 + 2)).toBe(true)
  })

  it('issue into a revoked family MUST answer revoked and save nothing', async (store) => {
    const family = familyAt(t0)
    await store.issue(family, [accessToken(family, t0)], t0)
    await store.revokeFamily(family.id, t0 + 1, family.expiresAt)
    const late = accessToken(family, t0 + 2)
    expect(await store.issue(family, [late], t0 + 2)).toBe('revoked')
    expect(await active(store, late, t0 + 2)).toBe(false)
  })

  it('revokeFamily before the family exists MUST make a later issue answer revoked (a replayed code)', async (store) => {
    const family = familyAt(t0)
    await store.revokeFamily(family.id, t0, family.expiresAt)
    const tokens = [accessToken(family, t0 + 1), refreshToken(family, t0 + 1)]
    expect(await store.issue(family, tokens, t0 + 1)).toBe('revoked')
    for (const token of tokens) expect(await active(store, token, t0 + 1)).toBe(false)
    expect(
      await store.rotateRefresh(family.id, tokens[1]?.tokenHash ?? '', [], t0 + 2, { graceMs: 0 }),
    ).toMatchObject({
      state: expect.stringMatching(/^(absent|revoked)$/),
    })
  })

  it('a revocation mark MUST be kept until retainUntil', async (store) => {
    const family = familyAt(t0)
    const retainUntil = t0 + 30 * DAY
    await store.revokeFamily(family.id, t0, retainUntil)
    const late = accessToken(family, retainUntil - 1)
    expect(await store.issue(family, [late], retainUntil - 1)).toBe('revoked')
    // A second revocation with an earlier retainUntil never shortens the mark.
    const existing = familyAt(t0)
    const token = refreshToken(existing, t0)
    await store.issue(existing, [token], t0)
    await store.revokeFamily(existing.id, t0, retainUntil)
    await store.revokeFamily(existing.id, t0 + 1, t0 + 2)
    const again = accessToken(existing, retainUntil - 1)
    expect(await store.issue(existing, [again], retainUntil - 1)).toBe('revoked')
  })

  it('after retainUntil (and the end of the family) a revocation mark MUST be gone: issue answers issued', async (store) => {
    const family = familyAt(t0)
    const retainUntil = t0 + DAY
    await store.revokeFamily(family.id, t0, retainUntil)
    expect(await store.issue(family, [accessToken(family, retainUntil - 1)], retainUntil - 1)).toBe(
      'revoked',
    )
    const late = accessToken(family, retainUntil)
    expect(await store.issue(family, [late], retainUntil)).toBe('issued')
    expect(await store.findToken(family.id, late.tokenHash, retainUntil)).toEqual({
      token: late,
      family,
    })
  })

  it('issuing a token hash that is already stored MUST answer issued and leave the stored token as it was', async (store) => {
    const family = familyAt(t0)
    const access = accessToken(family, t0)
    const refresh = refreshToken(family, t0)
    expect(await store.issue(family, [access, refresh], t0)).toBe('issued')
    const next = [accessToken(family, t0 + 1), refreshToken(family, t0 + 1)]
    expect(
      (await store.rotateRefresh(family.id, refresh.tokenHash, next, t0 + 1, { graceMs: 0 })).state,
    ).toBe('rotated')
    const changed = { ...access, jti: randomId(), expiresAt: access.expiresAt + MINUTE }
    expect(await store.issue(family, [changed, refresh], t0 + 2)).toBe('issued')
    expect(await store.findToken(family.id, access.tokenHash, t0 + 2)).toEqual({
      token: access,
      family,
    })
    // The rotated refresh token stays rotated: presented again, it is a reuse.
    expect(await active(store, refresh, t0 + 2)).toBe(false)
    expect(
      (await store.rotateRefresh(family.id, refresh.tokenHash, [], t0 + 3, { graceMs: 0 })).state,
    ).toBe('reused')
  })

  it(`a revokeFamily racing ${concurrency} issue calls MUST leave no token of the family active`, async (store) => {
    const family = familyAt(t0)
    const tokens = Array.from({ length: concurrency }, () => accessToken(family, t0))
    const answers = await Promise.all([
      ...tokens.slice(0, concurrency >> 1).map((token) => store.issue(family, [token], t0)),
      store.revokeFamily(family.id, t0, family.expiresAt),
      ...tokens.slice(concurrency >> 1).map((token) => store.issue(family, [token], t0)),
    ])
    for (const answer of answers) expect([undefined, 'issued', 'revoked']).toContain(answer)
    for (const token of tokens) expect(await active(store, token, t0 + 1)).toBe(false)
    expect(await store.issue(family, [accessToken(family, t0 + 1)], t0 + 1)).toBe('revoked')
  })
}
