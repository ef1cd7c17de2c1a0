/**
 * Records with unusual characters: quotes, backslashes, SQL and JSON metacharacters, non-ASCII
 * text and long values round-trip unchanged. What a store must hold: ids, hashes and keys are
 * base64url or VSCHAR (printable ASCII, RFC 6749 Appendix A); `state` and `nonce` are VSCHAR
 * (the server refuses anything else); other text (subjects, login hints, scopes, URIs) is any
 * Unicode string without U+0000.
 *
 * @module
 */
import { expect } from 'vitest'
import type { SuiteContext } from './suite.ts'
import { accessToken, codeAt, familyAt, interactionAt, MINUTE, randomId } from './suite.ts'

/** Every VSCHAR (%x20-7E), in order. */
const VSCHAR = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)).join('')
/** Text that breaks naive quoting: SQL, JSON, Lua patterns, non-ASCII and astral characters. */
const AWKWARD = `O'Brien "quoted" \\ back\\slash; DROP TABLE x; -- %s %d [{}] $1 ü ß 東京 🎉 \u2028 \t`

/** Registers the cases of records with unusual characters. */
export function recordCases(context: SuiteContext): void {
  const { it, t0 } = context

  it('an interaction with every VSCHAR in state, a long nonce and non-ASCII text MUST round-trip unchanged', async (store) => {
    const interaction = interactionAt(t0, {
      state: VSCHAR,
      nonce: `${VSCHAR}${'n'.repeat(512 - VSCHAR.length)}`,
      loginHint: AWKWARD,
      redirectUri: `https://client.example/cb?q=${encodeURIComponent(AWKWARD)}&x='"`,
      scopes: ['openid', 'read:"orders"', 'ü'],
    })
    await store.saveInteraction(interaction)
    expect(await store.findInteraction(interaction.id, t0 + 1)).toEqual(interaction)
    expect(await store.takeInteraction(interaction.id, t0 + 1)).toEqual(interaction)
  })

  it('a code and a family with non-ASCII subjects, quoted scopes and a key-bound token MUST round-trip unchanged', async (store) => {
    const code = codeAt(t0, { subject: AWKWARD, nonce: VSCHAR, scopes: ["a'b", 'c"d', 'é'] })
    await store.saveCode(code)
    expect(await store.consumeCode(code.codeHash, t0 + 1)).toEqual({ state: 'consumed', code })
    const family = familyAt(t0, {
      subject: `${AWKWARD}${'x'.repeat(200)}`,
      clientId: `client '"\\ ü`,
      scopes: ['openid', "a'b", 'c"d', '\\'],
      resource: `https://api.example/${encodeURIComponent(AWKWARD)}`,
    })
    const token = accessToken(family, t0, {
      jti: randomId(),
      scopes: ["a'b"],
      confirmation: { jkt: randomId(32), 'x5t#S256': randomId(32) },
    })
    expect(await store.issue(family, [token], t0)).toBe('issued')
    expect(await store.findToken(family.id, token.tokenHash, t0 + 1)).toEqual({ token, family })
  })

  it('replay-cache keys with quotes, backslashes and non-ASCII characters MUST be kept apart', async (store) => {
    const key = `jti:${randomId()}:${AWKWARD}`
    expect(await store.remember(key, t0 + MINUTE, t0)).toBe(true)
    expect(await store.remember(key, t0 + MINUTE, t0)).toBe(false)
    expect(await store.remember(`${key} `, t0 + MINUTE, t0)).toBe(true)
  })
}
