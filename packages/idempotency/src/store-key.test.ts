import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { deriveStoreKey } from './store-key.ts'

describe('deriveStoreKey', () => {
  test('a fixed 43-character base64url key', async () => {
    expect(await deriveStoreKey('client:alice', 'order-1')).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  test('is stable: a pinned vector, so records stay readable across versions', async () => {
    // base64url(SHA-256("29:api-blocks.idempotency.key.v1" "1:s" "1:k")), computed with
    // node:crypto outside this code.
    expect(await deriveStoreKey('s', 'k')).toBe('axOPr-Bfi_vEcaRT3aK2vqUk8PNAcxXWkgQ_Jsb56Q8')
  })

  test('the draft §5: the same key in two scopes gives two store keys', async () => {
    expect(await deriveStoreKey('alice', 'k')).not.toBe(await deriveStoreKey('bob', 'k'))
  })

  test('framing: no pair of (scope, key) splits collide', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string(),
        fc.string(),
        fc.string(),
        fc.string(),
        async (s1, k1, s2, k2) => {
          if (s1 === s2 && k1 === k2) return
          expect(await deriveStoreKey(s1, k1)).not.toBe(await deriveStoreKey(s2, k2))
        },
      ),
      { interruptAfterTimeLimit: 1000 },
    )
    expect(await deriveStoreKey('ab', 'c')).not.toBe(await deriveStoreKey('a', 'bc'))
  })
})
