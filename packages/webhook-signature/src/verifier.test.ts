import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  bodyOf,
  derivedVectors,
  malformedTimestamps,
  multiSignatureTemplate,
  publishedVectors,
  wrongSignatures,
} from '../test/vectors.ts'
import { WebhookSignatureError } from './error.ts'
import { createSigner } from './signer.ts'
import { createVerifier } from './verifier.ts'

const budget = { interruptAfterTimeLimit: 2000 }
const SW1 = publishedVectors[0]!
const at = (seconds: number) => () => seconds * 1000

function headersOf(signature: string, timestamp = String(SW1.timestamp), id = SW1.id) {
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature }
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (error instanceof WebhookSignatureError) return error.code
    throw error
  }
  return 'OK'
}

describe('createVerifier: published and derived vectors', () => {
  for (const vector of [...publishedVectors, ...derivedVectors]) {
    test(`MUST accept the vector: ${vector.name}`, async () => {
      const verifier = createVerifier({
        secrets: vector.secret,
        scheme: vector.scheme,
        clock: at(vector.timestamp),
      })
      const headers = {
        'webhook-id': vector.id,
        'webhook-timestamp': String(vector.timestamp),
        'webhook-signature': vector.signature,
      }
      await expect(verifier.verify(headers, bodyOf(vector))).resolves.toEqual({
        id: vector.id,
        timestamp: vector.timestamp,
      })
      // A Headers object gives the same answer as a record.
      await expect(verifier.verify(new Headers(headers), bodyOf(vector))).resolves.toBeDefined()
    })
  }

  test('MUST refuse the standard signature under the timestamp-body scheme, and the reverse', async () => {
    const [timestampBody] = derivedVectors
    const standard = createVerifier({ secrets: SW1.secret, clock: at(SW1.timestamp) })
    const variant = createVerifier({
      secrets: SW1.secret,
      clock: at(SW1.timestamp),
      scheme: 'timestamp-body',
    })
    expect(await codeOf(standard.verify(headersOf(timestampBody!.signature), SW1.body))).toBe(
      'SIGNATURE_MISMATCH',
    )
    expect(await codeOf(variant.verify(headersOf(SW1.signature), SW1.body))).toBe(
      'SIGNATURE_MISMATCH',
    )
  })

  for (const signature of wrongSignatures) {
    test(`MUST refuse the wrong or partial signature ${JSON.stringify(signature)}`, async () => {
      const verifier = createVerifier({ secrets: SW1.secret, clock: at(SW1.timestamp) })
      expect(await codeOf(verifier.verify(headersOf(signature), SW1.body))).toBe(
        'SIGNATURE_MISMATCH',
      )
    })
  }

  test('refuses the right MAC in a non-canonical base64 (pad bits set), and with whitespace', async () => {
    // SW-1's signature ends in `E=`; `F=` decodes to the same 32 bytes in a lenient decoder.
    const verifier = createVerifier({ secrets: SW1.secret, clock: at(SW1.timestamp) })
    expect(SW1.signature.endsWith('E=')).toBe(true)
    const padBits = `${SW1.signature.slice(0, -2)}F=`
    for (const field of [padBits, `${SW1.signature}\n`, `${SW1.signature.slice(0, -1)}`]) {
      expect(await codeOf(verifier.verify(headersOf(field), SW1.body))).toBe('SIGNATURE_MISMATCH')
    }
  })

  test('MUST accept the multi-signature header with the valid signature third', async () => {
    const verifier = createVerifier({ secrets: SW1.secret, clock: at(SW1.timestamp) })
    const field = multiSignatureTemplate.replace('<valid>', SW1.signature)
    await expect(verifier.verify(headersOf(field), SW1.body)).resolves.toBeDefined()
  })

  test('ignores versions other than v1 (v1a, v2) even when their value is the right MAC', async () => {
    const verifier = createVerifier({ secrets: SW1.secret, clock: at(SW1.timestamp) })
    const mac = SW1.signature.slice(3)
    expect(await codeOf(verifier.verify(headersOf(`v1a,${mac} v2,${mac}`), SW1.body))).toBe(
      'SIGNATURE_MISMATCH',
    )
  })

  test('MUST verify over the raw bytes: a changed body byte fails', async () => {
    const nonUtf8 = derivedVectors.find((vector) => vector.bodyHex === true)!
    const verifier = createVerifier({ secrets: SW1.secret, clock: at(SW1.timestamp) })
    const body = bodyOf(nonUtf8) as Uint8Array
    const changed = Uint8Array.from(body)
    changed[6] = 0xfe
    await expect(verifier.verify(headersOf(nonUtf8.signature), body)).resolves.toBeDefined()
    expect(await codeOf(verifier.verify(headersOf(nonUtf8.signature), changed))).toBe(
      'SIGNATURE_MISMATCH',
    )
  })
})

describe('createVerifier: header fields', () => {
  const verifier = createVerifier({ secrets: SW1.secret, clock: at(SW1.timestamp) })

  test('a missing or empty field answers HEADER_MISSING', async () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const headers: Record<string, string> = headersOf(SW1.signature)
      delete headers[name]
      expect(await codeOf(verifier.verify(headers, SW1.body))).toBe('HEADER_MISSING')
      expect(await codeOf(verifier.verify({ ...headers, [name]: '' }, SW1.body))).toBe(
        'HEADER_MISSING',
      )
    }
  })

  test('field names are matched without regard to case, in records and lists of pairs', async () => {
    const record = {
      'Webhook-Id': SW1.id,
      'WEBHOOK-TIMESTAMP': String(SW1.timestamp),
      'webhook-Signature': SW1.signature,
    }
    await expect(verifier.verify(record, SW1.body)).resolves.toBeDefined()
    await expect(verifier.verify(Object.entries(record), SW1.body)).resolves.toBeDefined()
  })

  for (const timestamp of [...malformedTimestamps, '1'.repeat(13), ' 1614265330', '0x10']) {
    test(`MUST refuse the timestamp ${JSON.stringify(timestamp)} as HEADER_MALFORMED`, async () => {
      expect(await codeOf(verifier.verify(headersOf(SW1.signature, timestamp), SW1.body))).toBe(
        'HEADER_MALFORMED',
      )
    })
  }

  test('bounds every field: an id over 256 characters, a signature over 4096', async () => {
    const longId = headersOf(SW1.signature, undefined, 'm'.repeat(257))
    expect(await codeOf(verifier.verify(longId, SW1.body))).toBe('HEADER_MALFORMED')
    const longField = `${SW1.signature}${' v1,x'.repeat(1000)}`
    expect(await codeOf(verifier.verify(headersOf(longField), SW1.body))).toBe('HEADER_MALFORMED')
  })

  test('the error is a 400 bad-request problem with the code', async () => {
    const error = await verifier.verify(headersOf('v1,'), SW1.body).catch((caught) => caught)
    expect(error).toBeInstanceOf(WebhookSignatureError)
    expect(error.code).toBe('SIGNATURE_MISMATCH')
    expect(error.toProblem()).toMatchObject({ status: 400 })
  })
})

describe('createVerifier: tolerance and clock', () => {
  const signer = createSigner({ secret: SW1.secret })
  const sent = 1_700_000_000

  test('MUST accept exactly 300 s either way and refuse 301 s (the default)', async () => {
    const headers = await signer.sign({ id: 'msg_1', timestamp: sent, body: 'x' })
    const verifierAt = (now: number) => createVerifier({ secrets: SW1.secret, clock: at(now) })
    await expect(verifierAt(sent + 300).verify(headers, 'x')).resolves.toBeDefined()
    await expect(verifierAt(sent - 300).verify(headers, 'x')).resolves.toBeDefined()
    expect(await codeOf(verifierAt(sent + 301).verify(headers, 'x'))).toBe('TIMESTAMP_TOO_OLD')
    expect(await codeOf(verifierAt(sent - 301).verify(headers, 'x'))).toBe('TIMESTAMP_TOO_NEW')
  })

  test('the timestamp is checked before the signature: a stale forgery is TIMESTAMP_TOO_OLD', async () => {
    const verifier = createVerifier({ secrets: SW1.secret, clock: at(SW1.timestamp + 1000) })
    expect(await codeOf(verifier.verify(headersOf('v1,'), SW1.body))).toBe('TIMESTAMP_TOO_OLD')
  })

  test('a configured tolerance, and milliseconds of the clock rounded down', async () => {
    const headers = await signer.sign({ id: 'msg_1', timestamp: sent, body: 'x' })
    const strict = (ms: number) =>
      createVerifier({ secrets: SW1.secret, toleranceSeconds: 5, clock: () => ms })
    await expect(strict(sent * 1000 + 5999).verify(headers, 'x')).resolves.toBeDefined()
    expect(await codeOf(strict(sent * 1000 + 6000).verify(headers, 'x'))).toBe('TIMESTAMP_TOO_OLD')
    expect(() => createVerifier({ secrets: SW1.secret, toleranceSeconds: -1 })).toThrow(RangeError)
  })
})

describe('createVerifier: rotation', () => {
  const oldSecret = new Uint8Array(32).fill(1)
  const newSecret = new Uint8Array(32).fill(2)
  const otherSecret = new Uint8Array(32).fill(3)
  const message = { id: 'msg_r', timestamp: 1_700_000_000, body: '{"a":1}' }
  const clock = at(message.timestamp)

  test('a verifier with several secrets accepts a delivery signed with any one of them', async () => {
    const verifier = createVerifier({ secrets: [newSecret, oldSecret], clock })
    for (const secret of [oldSecret, newSecret]) {
      const headers = await createSigner({ secret }).sign(message)
      await expect(verifier.verify(headers, message.body)).resolves.toBeDefined()
    }
    const other = await createSigner({ secret: otherSecret }).sign(message)
    expect(await codeOf(verifier.verify(other, message.body))).toBe('SIGNATURE_MISMATCH')
  })

  test('a delivery signed with both secrets passes a verifier that knows only one', async () => {
    const headers = await createSigner({ secrets: [newSecret, oldSecret] }).sign(message)
    for (const secret of [oldSecret, newSecret]) {
      const verifier = createVerifier({ secrets: secret, clock })
      await expect(verifier.verify(headers, message.body)).resolves.toBeDefined()
    }
  })
})

describe('properties', () => {
  const id = fc.stringMatching(/^[\x21-\x7e]{1,64}$/)
  const timestamp = fc.integer({ min: 0, max: 99_999_999_999 })
  const secret = fc.uint8Array({ minLength: 1, maxLength: 64 })
  const scheme = fc.constantFrom('standard' as const, 'timestamp-body' as const)

  test('sign then verify round trips, over any body bytes (UTF-8 or not)', async () => {
    await fc.assert(
      fc.asyncProperty(
        id,
        timestamp,
        secret,
        scheme,
        fc.uint8Array({ maxLength: 512 }),
        async (id, timestamp, secret, scheme, body) => {
          const headers = await createSigner({ secret, scheme }).sign({ id, timestamp, body })
          const verifier = createVerifier({ secrets: secret, scheme, clock: at(timestamp) })
          expect(await verifier.verify(headers, body)).toEqual({ id, timestamp })
          // One flipped bit of the body fails.
          const flipped = Uint8Array.from(body)
          if (flipped.length > 0) {
            flipped[0] = flipped[0]! ^ 0x80
            expect(await codeOf(verifier.verify(headers, flipped))).toBe('SIGNATURE_MISMATCH')
          }
        },
      ),
      budget,
    )
  })

  test('a string body signs and verifies as its UTF-8 bytes, lone surrogates as U+FFFD', async () => {
    // The string path hashes the joined string without encoding it first (signed-content.ts):
    // it must give the bytes TextEncoder gives, which is also what fetch sends for a string.
    await fc.assert(
      fc.asyncProperty(
        id,
        timestamp,
        secret,
        scheme,
        fc.oneof(fc.string({ unit: 'binary', maxLength: 600 }), fc.constant('a\ud800.\udc00é')),
        async (id, timestamp, secret, scheme, text) => {
          const bytes = new TextEncoder().encode(text)
          const signer = createSigner({ secret, scheme })
          const fromText = await signer.sign({ id, timestamp, body: text })
          expect(fromText).toEqual(await signer.sign({ id, timestamp, body: bytes }))
          const verifier = createVerifier({ secrets: secret, scheme, clock: at(timestamp) })
          expect(await verifier.verify(fromText, bytes)).toEqual({ id, timestamp })
          expect(await verifier.verify(fromText, text)).toEqual({ id, timestamp })
        },
      ),
      budget,
    )
  })

  test('arbitrary header values never throw anything but WebhookSignatureError', async () => {
    const verifier = createVerifier({ secrets: SW1.secret, clock: at(SW1.timestamp) })
    const value = fc.oneof(
      fc.string({ maxLength: 64 }),
      fc.string({ unit: 'binary', maxLength: 64 }),
      fc.stringMatching(/^[0-9]{1,16}$/),
      fc.constantFrom(SW1.id, String(SW1.timestamp), SW1.signature, 'v1,', 'v1a,x'),
      fc.string({ maxLength: 5000 }),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.option(value),
        fc.option(value),
        fc.option(value),
        fc.uint8Array({ maxLength: 64 }),
        async (idValue, timestampValue, signatureValue, body) => {
          const headers: Record<string, string> = {}
          if (idValue !== null) headers['webhook-id'] = idValue
          if (timestampValue !== null) headers['webhook-timestamp'] = timestampValue
          if (signatureValue !== null) headers['webhook-signature'] = signatureValue
          const outcome = await verifier.verify(headers, body).then(
            () => 'resolved',
            (error: unknown) => error,
          )
          if (outcome !== 'resolved') expect(outcome).toBeInstanceOf(WebhookSignatureError)
        },
      ),
      budget,
    )
  })
})
