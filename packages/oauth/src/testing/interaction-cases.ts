/**
 * Interactions (a login and consent in progress) and authorization codes: saved, found,
 * taken or consumed once, gone at their expiry.
 *
 * @module
 */
import { expect } from 'vitest'
import type { SuiteContext } from './suite.ts'
import { codeAt, interactionAt, MINUTE, randomId, tally } from './suite.ts'

/** Registers the interaction and code cases. */
export function interactionCases(context: SuiteContext): void {
  const { it, t0, concurrency } = context

  it('a saved interaction MUST be found as saved until its expiresAt, and MUST be absent from it on', async (store) => {
    const interaction = interactionAt(t0)
    await store.saveInteraction(interaction)
    expect(await store.findInteraction(interaction.id, t0)).toEqual(interaction)
    expect(await store.findInteraction(interaction.id, interaction.expiresAt - 1)).toEqual(
      interaction,
    )
    expect(await store.findInteraction(interaction.id, interaction.expiresAt)).toBeUndefined()
    expect(await store.takeInteraction(interaction.id, interaction.expiresAt)).toBeUndefined()
  })

  it('an interaction without a nonce round-trips without one; an unknown id is absent', async (store) => {
    const interaction = interactionAt(t0, {
      nonce: undefined,
      scopes: ['write:orders'],
      prompt: undefined,
      maxAge: undefined,
      loginHint: undefined,
    })
    await store.saveInteraction(interaction)
    const found = await store.findInteraction(interaction.id, t0 + 1)
    expect(found).toEqual(interaction)
    expect(found?.nonce).toBeUndefined()
    expect(found?.prompt).toBeUndefined()
    expect(found?.maxAge).toBeUndefined()
    expect(found?.loginHint).toBeUndefined()
    expect(found?.bindingHash).toBe(interaction.bindingHash)
    expect(await store.findInteraction(randomId(), t0)).toBeUndefined()
    expect(await store.takeInteraction(randomId(), t0)).toBeUndefined()
  })

  it('takeInteraction MUST answer the interaction once, then it is absent', async (store) => {
    const interaction = interactionAt(t0)
    const other = interactionAt(t0)
    await store.saveInteraction(interaction)
    await store.saveInteraction(other)
    expect(await store.takeInteraction(interaction.id, t0 + 1)).toEqual(interaction)
    expect(await store.takeInteraction(interaction.id, t0 + 2)).toBeUndefined()
    expect(await store.findInteraction(interaction.id, t0 + 2)).toBeUndefined()
    // Another interaction is untouched.
    expect(await store.findInteraction(other.id, t0 + 2)).toEqual(other)
  })

  it(`of ${concurrency} concurrent takeInteraction calls exactly one MUST get the interaction`, async (store) => {
    const interaction = interactionAt(t0)
    await store.saveInteraction(interaction)
    const answers = await Promise.all(
      Array.from({ length: concurrency }, () => store.takeInteraction(interaction.id, t0 + 1)),
    )
    expect(answers.filter((answer) => answer !== undefined)).toEqual([interaction])
  })

  it('consumeCode of a saved code MUST answer consumed with the record as saved', async (store) => {
    const code = codeAt(t0)
    await store.saveCode(code)
    expect(await store.consumeCode(code.codeHash, t0 + 1)).toEqual({ state: 'consumed', code })
  })

  it('a consumed code MUST answer replayed, with its record, every time until its expiresAt', async (store) => {
    const code = codeAt(t0, { nonce: undefined })
    await store.saveCode(code)
    await store.consumeCode(code.codeHash, t0)
    expect(await store.consumeCode(code.codeHash, t0 + 1)).toEqual({ state: 'replayed', code })
    expect(await store.consumeCode(code.codeHash, code.expiresAt - 1)).toEqual({
      state: 'replayed',
      code,
    })
    expect(await store.consumeCode(code.codeHash, code.expiresAt)).toEqual({ state: 'absent' })
  })

  it('a code MUST be absent from its expiresAt on, consumed or not; an unknown code is absent', async (store) => {
    const code = codeAt(t0)
    await store.saveCode(code)
    expect(await store.consumeCode(code.codeHash, code.expiresAt)).toEqual({ state: 'absent' })
    expect(await store.consumeCode(code.codeHash, code.expiresAt + MINUTE)).toEqual({
      state: 'absent',
    })
    expect(await store.consumeCode(randomId(32), t0)).toEqual({ state: 'absent' })
  })

  it('codes are independent: consuming one leaves another unused', async (store) => {
    const first = codeAt(t0)
    const second = codeAt(t0)
    await store.saveCode(first)
    await store.saveCode(second)
    expect((await store.consumeCode(first.codeHash, t0)).state).toBe('consumed')
    expect(await store.consumeCode(second.codeHash, t0)).toEqual({
      state: 'consumed',
      code: second,
    })
  })

  it(`of ${concurrency} concurrent consumeCode calls exactly one MUST answer consumed, the others replayed`, async (store) => {
    const code = codeAt(t0)
    await store.saveCode(code)
    const answers = await Promise.all(
      Array.from({ length: concurrency }, () => store.consumeCode(code.codeHash, t0 + 1)),
    )
    expect(tally(answers)).toEqual({ consumed: 1, replayed: concurrency - 1 })
    for (const answer of answers) expect(answer).toEqual({ state: answer.state, code })
  })
}
