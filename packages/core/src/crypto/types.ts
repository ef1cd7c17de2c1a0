/**
 * The API both builds of `@api-blocks/core/crypto` implement: node:crypto under the `node`
 * export condition (Node, Bun, Deno), Web Crypto everywhere else. Same inputs, same bytes out
 * (the tests run both against each other and against published vectors).
 *
 * @module
 */

/** What can be hashed or MACed: bytes, or a string hashed as its UTF-8. */
export type CryptoInput = string | Uint8Array

/**
 * An HMAC-SHA-256 key, made once with `createHmacKey` and used for every MAC: node:crypto keeps
 * it as a `KeyObject`, Web Crypto as a `CryptoKey`, so no call imports the secret again.
 */
export interface HmacKey {
  readonly algorithm: 'HMAC-SHA-256'
}
