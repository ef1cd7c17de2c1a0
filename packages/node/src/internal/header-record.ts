/**
 * Validation of a plain `{ name: value }` header record against the rules the Headers class
 * applies, so a record that passes can be written as it is without building a Headers.
 *
 * @module
 */

// RFC 9110 §5.1: field-name = token.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
// RFC 9110 §5.5 field-value, as Fetch normalises it: no leading or trailing whitespace, no
// NUL, CR or LF; node:http additionally refuses the other control characters, so a value
// with one takes the slow path and fails where the native path would fail.
const VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/

/** A record reduced to lower-case name/value pairs, as Headers iteration would yield them. */
export interface PlainHeaders {
  /** `[name, value, name, value, …]`, names lower-cased, in insertion order. */
  readonly flat: readonly string[]
  readonly hasContentType: boolean
  readonly hasContentLength: boolean
}

const EMPTY: PlainHeaders = {
  flat: Object.freeze([]),
  hasContentType: false,
  hasContentLength: false,
}

/**
 * The pairs of `record` when every name is a token, every value a normalised string and no
 * two names differ only by case; otherwise `undefined` (build a real Headers instead).
 */
export function plainHeaders(record: object): PlainHeaders | undefined {
  const proto = Object.getPrototypeOf(record)
  if (proto !== Object.prototype && proto !== null) return undefined
  const keys = Object.keys(record)
  if (keys.length === 0) return EMPTY
  const flat: string[] = []
  let hasContentType = false
  let hasContentLength = false
  for (const key of keys) {
    const value = (record as Record<string, unknown>)[key]
    if (typeof value !== 'string' || !TOKEN.test(key) || !VALUE.test(value)) return undefined
    const name = key.toLowerCase()
    for (let i = 0; i < flat.length; i += 2) if (flat[i] === name) return undefined
    if (name === 'content-type') hasContentType = true
    else if (name === 'content-length') hasContentLength = true
    flat.push(name, value)
  }
  return { flat, hasContentType, hasContentLength }
}
