/**
 * The Idempotency-Key header field: parsing in both forms clients send, and serialising in the
 * draft's form.
 *
 * - draft-ietf-httpapi-idempotency-key-header §2.1: the field is an Item Structured Field
 *   whose value MUST be an sf-string, so it is quoted: `Idempotency-Key: "8e03978e-40d5"`.
 * - Most APIs in use (Stripe among them) take a bare token: `Idempotency-Key: 8e03978e-40d5`.
 *
 * Both are accepted and give the same key: `"abc"` and `abc` are one key. After unquoting, a
 * key is 1 to {@link MAX_IDEMPOTENCY_KEY_LENGTH} characters of printable ASCII (%x20-7E).
 * The draft's security section asks servers to validate the key's format; everything else is
 * refused with `IDEMPOTENCY_KEY_INVALID` (400), without echoing the key back.
 *
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
 * @see https://www.rfc-editor.org/rfc/rfc8941#section-4.2.5 (RFC 9651 keeps the same rules)
 * @module
 */
import { IdempotencyError } from './error.ts'

/**
 * The longest key accepted, in characters after unquoting (Stripe's documented limit).
 *
 * @example
 * ```ts
 * parseIdempotencyKey('k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH)) // accepted
 * parseIdempotencyKey('k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1)) // throws IDEMPOTENCY_KEY_INVALID
 * ```
 */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255

/**
 * The longest field value looked at, in characters: a key of 255 characters that are all
 * escaped (`\"` or `\\`) plus its two quotes. Anything longer is refused before it is scanned.
 *
 * @example
 * ```ts
 * parseIdempotencyKey(`"${'\\"'.repeat(255)}"`) // 512 characters: 255 escaped quotes, accepted
 * ```
 */
export const MAX_IDEMPOTENCY_KEY_FIELD_LENGTH: number = 2 * MAX_IDEMPOTENCY_KEY_LENGTH + 2

const invalid = (detail: string): IdempotencyError =>
  new IdempotencyError('IDEMPOTENCY_KEY_INVALID', `The Idempotency-Key ${detail}.`)

// RFC 8941 §3.3.3: sf-string characters are %x20-21 / %x23-5B / %x5D-7E, plus the escapes.
const isPrintable = (code: number): boolean => code >= 0x20 && code <= 0x7e

/**
 * Parses an Idempotency-Key field value into the key it carries.
 *
 * Accepted: an sf-string (`"abc"`, with `\"` and `\\` escapes, RFC 8941 §4.2.5) or a bare
 * key (printable ASCII without `"` or `,`; a comma is how a repeated field line is joined, so
 * two keys sent at once are refused rather than read as one: draft §2.1, clients MUST NOT send
 * more than one). Surrounding spaces and tabs are
 * ignored (RFC 9110 §5.5). Structured Field parameters (`"abc";x=1`) are not accepted: the
 * draft defines none.
 *
 * @throws {IdempotencyError} with code `IDEMPOTENCY_KEY_INVALID` when the value is empty,
 *   longer than {@link MAX_IDEMPOTENCY_KEY_LENGTH} characters once unquoted, holds a character
 *   outside printable ASCII, or is a malformed sf-string.
 *
 * @example
 * ```ts
 * parseIdempotencyKey('"8e03978e-40d5-43e8"') // '8e03978e-40d5-43e8'
 * parseIdempotencyKey('8e03978e-40d5-43e8') // '8e03978e-40d5-43e8'
 * parseIdempotencyKey('') // throws IdempotencyError (IDEMPOTENCY_KEY_INVALID)
 * ```
 */
export function parseIdempotencyKey(fieldValue: string): string {
  // Bounded before any scan (with room for surrounding whitespace): a 10 KB value costs one
  // length check.
  if (fieldValue.length > MAX_IDEMPOTENCY_KEY_FIELD_LENGTH + 64) throw tooLong()
  const value = fieldValue.replace(/^[ \t]+|[ \t]+$/g, '')
  if (value.length === 0) throw invalid('is empty')
  if (value.length > MAX_IDEMPOTENCY_KEY_FIELD_LENGTH) throw tooLong()
  const key = value.charCodeAt(0) === 0x22 ? parseSfString(value) : parseBare(value)
  if (key.length === 0) throw invalid('is empty')
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw tooLong()
  return key
}

function tooLong(): IdempotencyError {
  return invalid(`is longer than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`)
}

// RFC 8941 §4.2.5, Parsing a String; then §4.2 steps 6-7: nothing may follow the item.
function parseSfString(value: string): string {
  let out = ''
  for (let index = 1; index < value.length; index++) {
    const code = value.charCodeAt(index)
    if (code === 0x5c) {
      // §4.2.5 step 4.2: a backslash escapes only DQUOTE or another backslash.
      const next = value.charCodeAt(index + 1)
      if (next !== 0x22 && next !== 0x5c) throw invalid('has a bad escape in its quoted string')
      out += value[index + 1]
      index++
    } else if (code === 0x22) {
      // §4.2.5 step 4.3: the closing quote ends the string.
      if (index !== value.length - 1) {
        throw invalid('has characters after its quoted string (parameters are not accepted)')
      }
      return out
    } else if (!isPrintable(code)) {
      // §4.2.5 step 4.4: %x00-1f and %x7f-ff fail parsing.
      throw invalid('has a character outside printable ASCII')
    } else {
      out += value[index]
    }
  }
  // §4.2.5 step 5: no closing quote.
  throw invalid('has an unterminated quoted string')
}

function parseBare(value: string): string {
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index)
    if (!isPrintable(code)) throw invalid('has a character outside printable ASCII')
    if (code === 0x22) throw invalid('has a quote; send it as a quoted string')
    if (code === 0x2c) throw invalid('has a comma (was the header sent twice?)')
  }
  return value
}

/**
 * Serialises a key as the draft's sf-string (RFC 8941 §4.1.6): quoted, with `"` and `\`
 * escaped. What a client sends; `parseIdempotencyKey(formatIdempotencyKey(key)) === key`.
 *
 * @throws {TypeError} when `key` is empty, longer than {@link MAX_IDEMPOTENCY_KEY_LENGTH} or
 *   not printable ASCII (an sf-string cannot carry it).
 *
 * @example
 * ```ts
 * const headers = { 'idempotency-key': formatIdempotencyKey(crypto.randomUUID()) }
 * formatIdempotencyKey('a"b') // '"a\\"b"'
 * ```
 */
export function formatIdempotencyKey(key: string): string {
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new TypeError(`An idempotency key has 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`)
  }
  for (let index = 0; index < key.length; index++) {
    if (!isPrintable(key.charCodeAt(index))) {
      throw new TypeError('An idempotency key holds printable ASCII only (%x20-7E)')
    }
  }
  return `"${key.replace(/[\\"]/g, '\\$&')}"`
}
