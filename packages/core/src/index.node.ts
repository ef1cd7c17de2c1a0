/**
 * The package root under the `node` export condition: everything of `index.ts`, with base64
 * and base64url on Node's native `Buffer` (see `base64.node.ts`). Same API, same results.
 *
 * @module
 */

export { decodeBase64, decodeBase64url, encodeBase64, encodeBase64url } from './base64.node.ts'
export * from './index.ts'
