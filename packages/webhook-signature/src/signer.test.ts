import { describe, expect, test } from 'vitest'
import { bodyOf, derivedVectors, publishedVectors } from '../test/vectors.ts'
import { createSigner } from './signer.ts'

describe('createSigner', () => {
  for (const vector of [...publishedVectors, ...derivedVectors]) {
    test(`signs the vector: ${vector.name}`, async () => {
      const signer = createSigner({ secret: vector.secret, scheme: vector.scheme })
      const headers = await signer.sign({
        id: vector.id,
        timestamp: vector.timestamp,
        body: bodyOf(vector),
      })
      expect(headers).toEqual({
        'webhook-id': vector.id,
        'webhook-timestamp': String(vector.timestamp),
        'webhook-signature': vector.signature,
      })
    })
  }

  test('a secret without the whsec_ prefix, and the raw key bytes, sign the same', async () => {
    const [vector] = publishedVectors
    const message = { id: vector!.id, timestamp: vector!.timestamp, body: vector!.body }
    const bare = createSigner({ secret: vector!.secret.slice('whsec_'.length) })
    expect((await bare.sign(message))['webhook-signature']).toBe(vector!.signature)
  })

  test('several secrets: one v1 signature per secret, separated by spaces (rotation)', async () => {
    const [first, second] = publishedVectors
    const signer = createSigner({ secrets: [first!.secret, second!.secret] })
    const headers = await signer.sign({
      id: first!.id,
      timestamp: first!.timestamp,
      body: first!.body,
    })
    const signatures = headers['webhook-signature'].split(' ')
    expect(signatures).toHaveLength(2)
    expect(signatures[0]).toBe(first!.signature)
  })

  test('refuses empty and non-base64 secrets, and no secrets at all', () => {
    expect(() => createSigner({ secret: 'whsec_' })).toThrow(TypeError)
    expect(() => createSigner({ secret: '' })).toThrow(TypeError)
    expect(() => createSigner({ secret: 'whsec_not base64!' })).toThrow(TypeError)
    expect(() => createSigner({ secret: new Uint8Array() })).toThrow(TypeError)
    expect(() => createSigner({ secrets: [] })).toThrow(TypeError)
  })

  test('refuses a timestamp that is not whole non-negative seconds, and a bad id', async () => {
    const signer = createSigner({ secret: new Uint8Array(32).fill(7) })
    for (const timestamp of [1.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(signer.sign({ id: 'msg_1', timestamp, body: '' })).rejects.toThrow(RangeError)
    }
    for (const id of ['', 'has space', 'x'.repeat(257)]) {
      await expect(signer.sign({ id, timestamp: 1, body: '' })).rejects.toThrow(TypeError)
    }
  })
})
