/**
 * The first rule of the contract: every method returns a Promise, whatever it answers.
 *
 * @module
 */
import { expect } from 'vitest'
import type { SuiteContext } from './suite.ts'
import {
  accessToken,
  codeAt,
  familyAt,
  interactionAt,
  MINUTE,
  pairAt,
  promised,
  randomId,
  refreshToken,
} from './suite.ts'

/** Registers the Promise case. */
export function promiseCases(context: SuiteContext): void {
  const { it, t0 } = context

  it('every method MUST return a Promise, whatever it answers', async (store) => {
    const interaction = interactionAt(t0)
    expect(await promised(store.saveInteraction(interaction))).toBeUndefined()
    expect(await promised(store.findInteraction(interaction.id, t0))).toEqual(interaction)
    expect(await promised(store.findInteraction(randomId(), t0))).toBeUndefined()
    expect(await promised(store.takeInteraction(interaction.id, t0))).toEqual(interaction)
    expect(await promised(store.takeInteraction(interaction.id, t0))).toBeUndefined()

    const code = codeAt(t0)
    expect(await promised(store.saveCode(code))).toBeUndefined()
    expect((await promised(store.consumeCode(code.codeHash, t0))).state).toBe('consumed')
    expect((await promised(store.consumeCode(code.codeHash, t0))).state).toBe('replayed')
    expect((await promised(store.consumeCode(randomId(32), t0))).state).toBe('absent')

    const family = familyAt(t0)
    const access = accessToken(family, t0)
    const refresh = refreshToken(family, t0)
    expect(await promised(store.issue(family, [access, refresh], t0))).toBe('issued')
    expect(await promised(store.findToken(family.id, access.tokenHash, t0))).toBeDefined()
    expect(await promised(store.findToken(family.id, randomId(32), t0))).toBeUndefined()
    const next = pairAt(family, t0 + MINUTE)
    const rotate = (hash: string) =>
      promised(store.rotateRefresh(family.id, hash, next, t0 + MINUTE, { graceMs: 0 }))
    expect((await rotate(randomId(32))).state).toBe('absent')
    expect((await rotate(refresh.tokenHash)).state).toBe('rotated')
    expect(await promised(store.revokeToken(family.id, access.tokenHash, t0))).toBeUndefined()
    expect(await promised(store.revokeToken(family.id, randomId(32), t0))).toBeUndefined()
    expect((await rotate(refresh.tokenHash)).state).toBe('reused')
    expect((await rotate(next[1].tokenHash)).state).toBe('revoked')
    expect(await promised(store.revokeFamily(family.id, t0, family.expiresAt))).toBeUndefined()
    expect(await promised(store.issue(family, [], t0))).toBe('revoked')

    const key = `jti:${randomId()}`
    expect(await promised(store.remember(key, t0 + MINUTE, t0))).toBe(true)
    expect(await promised(store.remember(key, t0 + MINUTE, t0))).toBe(false)
  })
}
