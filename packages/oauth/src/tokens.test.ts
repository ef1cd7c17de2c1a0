import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  familyOfOpaqueToken,
  isCodeShape,
  opaqueToken,
  pooledRandom,
  randomId,
  randomSecret,
} from './tokens.ts'

const random = (bytes: number) => crypto.getRandomValues(new Uint8Array(bytes))

describe('opaque tokens', () => {
  test('a token is <familyId>.<secret>: 22 + 1 + 43 characters, 128 and 256 bits', () => {
    const familyId = randomId(random)
    const token = opaqueToken(familyId, random)
    expect(token).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/)
    expect(familyOfOpaqueToken(token)).toBe(familyId)
    expect(isCodeShape(randomSecret(random))).toBe(true)
  })

  test.each([
    ['empty', ''],
    ['the RFC 7662 example token', 'mF_9.B5f-4.1JqM'],
    ['a JWT', 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
    ['a non-canonical family id', `${'A'.repeat(21)}B.${'A'.repeat(43)}`],
    ['a token with padding', `${'A'.repeat(22)}.${'A'.repeat(42)}=`],
  ])('%s is not an opaque token of ours', (_name, token) => {
    expect(familyOfOpaqueToken(token)).toBeUndefined()
  })

  test('property: every token made parses back to its family; no string throws', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (a, b) => {
          let call = 0
          const fixed = () => (call++ === 0 ? a : b)
          const familyId = randomId(fixed)
          expect(familyOfOpaqueToken(opaqueToken(familyId, fixed))).toBe(familyId)
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
    fc.assert(
      fc.property(fc.string(), (text) => void familyOfOpaqueToken(text)),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

describe('pooledRandom', () => {
  test('hands out fresh bytes of the asked length, across refills', () => {
    const random = pooledRandom()
    const seen = new Set<string>()
    for (let i = 0; i < 1000; i++) {
      const bytes = random(i % 2 === 0 ? 16 : 32)
      expect(bytes.byteLength).toBe(i % 2 === 0 ? 16 : 32)
      const text = Array.from(bytes).join(',')
      expect(seen.has(text)).toBe(false)
      seen.add(text)
    }
    expect(random(10_000).byteLength).toBe(10_000)
  })

  test('what it handed out is a copy: changing it changes nothing later', () => {
    const random = pooledRandom()
    const a = random(16)
    a.fill(7)
    expect(Array.from(random(16)).every((byte) => byte === 7)).toBe(false)
  })
})
