import { describe, expect, test } from 'vitest'
import { createContext } from './context.ts'
import { MemoryOAuthStore } from './memory-store.ts'
import { resolveOptions } from './options.ts'

const base = { issuer: 'https://as.example.com', clients: [], interactionUrl: (id: string) => id }

describe('createContext', () => {
  test('the keys are imported once and shared', async () => {
    const context = createContext(resolveOptions(base), new MemoryOAuthStore())
    const [a, b] = await Promise.all([context.keys(), context.keys()])
    expect(a).toBe(b)
    expect(await context.keys()).toBe(a)
    expect(a.signing.alg).toBe('ES256')
  })

  test('hash is keyed: stable under one token key, different under another, 43 base64url characters', async () => {
    const key = new Uint8Array(32).fill(0x61)
    const context = createContext(
      resolveOptions({ ...base, tokenKey: key }),
      new MemoryOAuthStore(),
    )
    const other = createContext(
      resolveOptions({ ...base, tokenKey: new Uint8Array(32).fill(0x62) }),
      new MemoryOAuthStore(),
    )
    const hash = await context.hash('token')
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(await context.hash('token')).toBe(hash)
    expect(await other.hash('token')).not.toBe(hash)
  })
})
