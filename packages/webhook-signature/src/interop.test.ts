// Interop with the `standardwebhooks` npm package (the Standard Webhooks reference library for
// JavaScript), both ways. It reads the real clock, so these tests sign with the current time;
// its JSON parsing is turned off, the bodies are any text.
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import { describe, expect, test } from 'vitest'
import { createSigner } from './signer.ts'
import { createVerifier } from './verifier.ts'

const budget = { interruptAfterTimeLimit: 2000 }
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const id = fc.stringMatching(/^msg_[A-Za-z0-9]{1,32}$/)
// Text only: `standardwebhooks` decodes a Buffer body as UTF-8 before its HMAC, so bodies that
// are not UTF-8 cannot interoperate (ours signs their raw bytes).
const body = fc.string({ unit: 'grapheme', maxLength: 256 })

describe('interop with standardwebhooks', () => {
  test('ours signs, theirs verifies', async () => {
    const theirs = new Webhook(secret)
    const signer = createSigner({ secret })
    await fc.assert(
      fc.asyncProperty(id, body, async (id, body) => {
        const timestamp = Math.floor(Date.now() / 1000)
        const headers = await signer.sign({ id, timestamp, body })
        expect(() => theirs.verify(body, { ...headers }, { jsonParse: false })).not.toThrow()
      }),
      budget,
    )
  })

  test('theirs signs, ours verifies', async () => {
    const theirs = new Webhook(secret)
    const verifier = createVerifier({ secrets: secret })
    await fc.assert(
      fc.asyncProperty(id, body, async (id, body) => {
        const timestamp = Math.floor(Date.now() / 1000)
        const signature = theirs.sign(id, new Date(timestamp * 1000), body)
        const headers = {
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
        }
        await expect(verifier.verify(headers, body)).resolves.toEqual({ id, timestamp })
      }),
      budget,
    )
  })

  test('raw key bytes: theirs with format raw, ours with a Uint8Array', async () => {
    const key = new Uint8Array(32).map((_, index) => index)
    const timestamp = Math.floor(Date.now() / 1000)
    const signature = new Webhook(key, { format: 'raw' }).sign(
      'msg_1',
      new Date(timestamp * 1000),
      '{}',
    )
    const headers = await createSigner({ secret: key }).sign({ id: 'msg_1', timestamp, body: '{}' })
    expect(headers['webhook-signature']).toBe(signature)
  })
})
