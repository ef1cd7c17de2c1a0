/**
 * The key a record is stored under: the client's Idempotency-Key scoped by who sent it.
 *
 * The draft's security section (draft-ietf-httpapi-idempotency-key-header §5) warns that a
 * low-entropy key could let one client fetch another's stored response, and recommends
 * building the lookup key from the client's key plus client-specific attributes. Here that
 * attribute is the scope (by default the principal, else the client's address).
 *
 * `storeKey = base64url(SHA-256(frame("api-blocks.idempotency.key.v1", scope, key)))`, where
 * each part is framed by its UTF-8 byte length. Hashing gives every store a fixed 43-character
 * key of `A-Z a-z 0-9 - _` (safe in Redis keys and SQL text columns), keeps the client's raw
 * key out of the store, and the framing means `("ab", "c")` and `("a", "bc")` never meet.
 *
 * @module
 */
import { sha256Base64url } from '@api-blocks/core/crypto'
import { frame } from './internal/encoding.ts'

const VERSION = 'api-blocks.idempotency.key.v1'

/**
 * Derives the store key of a client's Idempotency-Key within a scope.
 *
 * @example
 * ```ts
 * const a = await deriveStoreKey('client:alice', 'order-1')
 * const b = await deriveStoreKey('client:bob', 'order-1')
 * a !== b // true: Bob can never replay Alice's response
 * a.length // 43
 * ```
 */
export function deriveStoreKey(scope: string, key: string): Promise<string> {
  return sha256Base64url(frame([VERSION, scope, key]))
}
