/**
 * Standard Webhooks signatures (docs/spec.md §5 rule 14) on any runtime: sign and verify over
 * the raw body bytes, several secrets during a rotation, a timestamp tolerance with an
 * injectable clock, and typed errors that answer 400.
 *
 * @example
 * ```ts
 * import { createSigner, createVerifier } from '@api-blocks/webhook-signature'
 * const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
 * const headers = await createSigner({ secret }).sign({ id: 'msg_1', timestamp: 1614265330, body: '{}' })
 * await createVerifier({ secrets: secret, clock: () => 1614265330_000 }).verify(headers, '{}')
 * ```
 *
 * @module
 */
export type { WebhookSignatureErrorCode } from './error.ts'
export { WebhookSignatureError } from './error.ts'
export type { WebhookSecret } from './secret.ts'
export type { WebhookSignatureScheme } from './signed-content.ts'
export type {
  WebhookHeaders,
  WebhookMessage,
  WebhookSigner,
  WebhookSignerOptions,
} from './signer.ts'
export { createSigner } from './signer.ts'
export type { VerifiedWebhook, WebhookVerifier, WebhookVerifierOptions } from './verifier.ts'
export { createVerifier } from './verifier.ts'
