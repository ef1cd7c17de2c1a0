/**
 * The sending side: the three Standard Webhooks header fields of one delivery.
 *
 * @module
 */
import { encodeBase64 } from '@api-blocks/core'
import { hmacSha256 } from '@api-blocks/core/crypto'
import { checkId } from './limits.ts'
import type { WebhookSecret } from './secret.ts'
import { keysOf } from './secret.ts'
import type { WebhookSignatureScheme } from './signed-content.ts'
import { signedContent } from './signed-content.ts'

/**
 * Options of {@link createSigner}: one `secret`, or several `secrets` during a rotation (the
 * delivery then carries one signature per secret).
 *
 * @example
 * ```ts
 * const options: WebhookSignerOptions = { secrets: [newSecret, oldSecret] }
 * ```
 */
export type WebhookSignerOptions = (
  | { secret: WebhookSecret; secrets?: never }
  | { secrets: readonly WebhookSecret[]; secret?: never }
) & {
  /** Which content is signed (default `'standard'`, see {@link WebhookSignatureScheme}). */
  scheme?: WebhookSignatureScheme
}

/**
 * One delivery to sign.
 *
 * @example
 * ```ts
 * const message: WebhookMessage = { id: 'msg_1', timestamp: 1614265330, body: '{"a":1}' }
 * ```
 */
export interface WebhookMessage {
  /** The `webhook-id`: unique per event, the same on every retry (receivers dedup on it). */
  id: string
  /** Unix time in whole seconds. */
  timestamp: number
  /** The exact bytes that will be sent (a string is sent, and signed, as its UTF-8). */
  body: Uint8Array | string
}

/**
 * The header fields of a signed delivery, named in lower case (a type, not an interface, so that
 * it is a `Record<string, string>` that `fetch` and `verify` take as headers).
 *
 * @example
 * ```ts
 * const headers: WebhookHeaders = await signer.sign(message)
 * await fetch(url, { method: 'POST', headers, body: message.body })
 * ```
 */
export type WebhookHeaders = {
  'webhook-id': string
  'webhook-timestamp': string
  /** `v1,<base64>` per secret, separated by spaces. */
  'webhook-signature': string
}

/**
 * Signs deliveries: keeps the HMAC keys made once.
 *
 * @example
 * ```ts
 * const headers = await signer.sign({ id: 'msg_1', timestamp: 1614265330, body: '{}' })
 * ```
 */
export interface WebhookSigner {
  /** The header fields for `message`. */
  sign(message: WebhookMessage): Promise<WebhookHeaders>
}

/**
 * Makes a Standard Webhooks signer: `v1,` + base64 of HMAC-SHA-256 over
 * `${id}.${timestamp}.${body}`, computed over the body's raw bytes. With several secrets the
 * signature field lists one signature per secret, separated by spaces (key rotation).
 *
 * @example
 * ```ts
 * const signer = createSigner({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
 * const headers = await signer.sign({
 *   id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
 *   timestamp: 1614265330,
 *   body: '{"test": 2432232314}',
 * })
 * headers['webhook-signature'] // 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
 * ```
 */
export function createSigner(options: WebhookSignerOptions): WebhookSigner {
  const keys = keysOf(options.secrets ?? (options.secret as WebhookSecret))
  const scheme = options.scheme ?? 'standard'
  return {
    async sign(message: WebhookMessage): Promise<WebhookHeaders> {
      if (!checkId(message.id)) {
        throw new TypeError('A webhook id is 1 to 256 visible ASCII characters')
      }
      if (!Number.isSafeInteger(message.timestamp) || message.timestamp < 0) {
        throw new RangeError('A webhook timestamp is a whole, non-negative number of seconds')
      }
      const timestamp = String(message.timestamp)
      const content = signedContent(scheme, message.id, timestamp, message.body)
      // One MAC after the other, not Promise.all over a map: with one or two keys the arrays and
      // the combined promise were a tenth of a 1 KiB sign in `npm run bench -- webhook-signature`
      // (docs/benchmarks.md, issue 15), and on node:crypto the MACs run in place anyway.
      let signatures = ''
      for (const key of keys) {
        const signature = `v1,${encodeBase64(await hmacSha256(key, content))}`
        signatures = signatures === '' ? signature : `${signatures} ${signature}`
      }
      return {
        'webhook-id': message.id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signatures,
      }
    },
  }
}
