import type { ApiBlocksError } from '@api-blocks/core'
import { describe, expectTypeOf, test } from 'vitest'
import type { VerifiedWebhook, WebhookHeaders, WebhookSignatureErrorCode } from './index.ts'
import { createSigner, createVerifier, WebhookSignatureError } from './index.ts'

describe('public types', () => {
  test('a signer takes one secret or several, never both', () => {
    createSigner({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
    createSigner({ secrets: [new Uint8Array(32)], scheme: 'timestamp-body' })
    // @ts-expect-error: one of `secret` and `secrets`
    createSigner({ secret: 'whsec_a', secrets: ['whsec_b'] })
    // @ts-expect-error: a secret is needed
    createSigner({})
    // @ts-expect-error: only the two schemes
    createSigner({ secret: 'whsec_a', scheme: 'body' })
  })

  test('signed headers go to verify and to fetch as they are', () => {
    const signer = createSigner({ secret: 'whsec_a' })
    expectTypeOf(signer.sign).returns.resolves.toEqualTypeOf<WebhookHeaders>()
    expectTypeOf<WebhookHeaders>().toExtend<Record<string, string>>()
    const verifier = createVerifier({ secrets: 'whsec_a' })
    expectTypeOf(verifier.verify).returns.resolves.toEqualTypeOf<VerifiedWebhook>()
    // @ts-expect-error: the body is bytes or text, never parsed JSON
    verifier.verify({}, { type: 'order.created' })
  })

  test('the error is an ApiBlocksError with a closed code union', () => {
    expectTypeOf<WebhookSignatureError>().toExtend<ApiBlocksError>()
    expectTypeOf<WebhookSignatureError['code']>().toEqualTypeOf<WebhookSignatureErrorCode>()
    // @ts-expect-error: not a code of this package
    new WebhookSignatureError('BODY_TOO_LARGE', 'x')
  })
})
