/**
 * Webhook secrets: the Standard Webhooks form `whsec_` + base64 (the decoded bytes are the
 * HMAC key), or the key's raw bytes.
 *
 * @module
 */
import { decodeBase64 } from '@api-blocks/core'
import type { HmacKey } from '@api-blocks/core/crypto'
import { createHmacKey } from '@api-blocks/core/crypto'

/**
 * A signing secret: `whsec_` followed by standard padded base64 of the key (the prefix is
 * optional, as in the Standard Webhooks libraries), or the key's bytes.
 *
 * @example
 * ```ts
 * const secret: WebhookSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
 * ```
 */
export type WebhookSecret = string | Uint8Array

const PREFIX = 'whsec_'

/** The key bytes of a secret; a TypeError for an empty secret or one that is not base64. */
function secretBytes(secret: WebhookSecret): Uint8Array {
  if (secret instanceof Uint8Array) {
    if (secret.byteLength === 0) throw new TypeError('A webhook secret must not be empty')
    return secret
  }
  if (typeof secret !== 'string')
    throw new TypeError('A webhook secret is a string or a Uint8Array')
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret
  const bytes = decodeBase64(encoded)
  if (bytes === undefined) throw new TypeError('A webhook secret is `whsec_` followed by base64')
  if (bytes.byteLength === 0) throw new TypeError('A webhook secret must not be empty')
  return bytes
}

/** The HMAC keys of one or more secrets, made once (node:crypto KeyObject or CryptoKey). */
export function keysOf(secrets: WebhookSecret | readonly WebhookSecret[]): HmacKey[] {
  const list: readonly WebhookSecret[] = Array.isArray(secrets)
    ? secrets
    : [secrets as WebhookSecret]
  if (list.length === 0) throw new TypeError('At least one webhook secret is needed')
  return list.map((secret) => createHmacKey(secretBytes(secret)))
}
