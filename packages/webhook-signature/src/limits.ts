/**
 * The length limits of the three header fields: every one is input from the network.
 *
 * @module
 */

/** The longest `webhook-id` accepted, in characters. */
const MAX_ID_LENGTH = 256
/** The most digits of a `webhook-timestamp` (12 digits reach the year 33658). */
export const MAX_TIMESTAMP_DIGITS = 12
/** The longest `webhook-signature` accepted, in characters (about 80 `v1` signatures). */
export const MAX_SIGNATURE_LENGTH = 4096

const ID = /^[\x21-\x7e]+$/

/** Whether `id` is 1 to {@link MAX_ID_LENGTH} visible ASCII characters. */
export function checkId(id: unknown): id is string {
  return typeof id === 'string' && id.length <= MAX_ID_LENGTH && ID.test(id)
}
