/**
 * Canonical JSON for request fingerprints: two bodies that differ only in member order or
 * whitespace give one text; a different value gives another.
 *
 * The form: no whitespace; object members sorted by name in UTF-16 code-unit order (the order
 * of RFC 8785 §3.2.3), recursively; array order kept; strings and numbers as `JSON.stringify`
 * writes them (RFC 8785 §3.2.2 uses the same ECMAScript number serialisation, so `1.0`, `1`
 * and `1e0` are one number). Two bodies are therefore the same when `JSON.parse` gives equal
 * values: what a JavaScript handler sees. A duplicate member name keeps its last value, as
 * `JSON.parse` does.
 *
 * @see https://www.rfc-editor.org/rfc/rfc8785 (JSON Canonicalization Scheme)
 * @module
 */

/**
 * A value `JSON.parse` can produce.
 *
 * @example
 * ```ts
 * const body: JsonValue = JSON.parse('{"items":[1,2]}')
 * ```
 */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [name: string]: JsonValue }

/**
 * The deepest nesting of arrays and objects canonicalised. A deeper body is not rejected:
 * the fingerprint then uses its raw bytes (see `computeFingerprint`), so a hostile body cannot
 * exhaust the stack.
 *
 * @example
 * ```ts
 * canonicalizeJsonText('['.repeat(MAX_CANONICAL_JSON_DEPTH + 1) + ']'.repeat(MAX_CANONICAL_JSON_DEPTH + 1)) // undefined
 * ```
 */
export const MAX_CANONICAL_JSON_DEPTH = 512

/**
 * The canonical text of a JSON value, or `undefined` when it cannot have one: nesting deeper
 * than {@link MAX_CANONICAL_JSON_DEPTH}, a number that is not finite (`1e400` parses to
 * Infinity, which JSON cannot write), or a value that is not JSON at all.
 *
 * @example
 * ```ts
 * canonicalJson({ b: [1, { d: true, c: null }], a: 'x' }) // '{"a":"x","b":[1,{"c":null,"d":true}]}'
 * canonicalJson(JSON.parse('{ "n": 1.0 }')) // '{"n":1}'
 * ```
 */
export function canonicalJson(value: JsonValue): string | undefined {
  return write(value, 0)
}

// In valid JSON text (JSON.parse accepted it), a string token or a number token: outside
// strings, only numbers contain digits, and a number ends where a character of this class
// stops (RFC 8259 §6: `-`, digits, `.`, `e`, `E`, `+`).
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|-?[0-9][0-9.eE+-]*/g

/**
 * Parses `text` as JSON (RFC 8259) and returns its canonical text, or `undefined` when it is
 * not JSON or has no canonical form (see {@link canonicalJson}). Never throws.
 *
 * @example
 * ```ts
 * canonicalizeJsonText('{ "b": 2,\n  "a": 1 }') // '{"a":1,"b":2}'
 * canonicalizeJsonText('{"a":') // undefined
 * ```
 */
export function canonicalizeJsonText(text: string): string | undefined {
  let value: JsonValue
  try {
    value = JSON.parse(text) as JsonValue
  } catch {
    return undefined
  }
  // A number is canonical only when its text is what JSON.stringify writes for the double it
  // parses to: `9007199254740993` and `0.1000000000000000000001` are rounded by JSON.parse,
  // and `1.0`, `-0` or `1e2` are spelled differently. Such bodies have no canonical form here
  // and are compared by their raw bytes, so two amounts that differ past double precision
  // never share a fingerprint. (A scan of the number tokens: cheaper than a JSON.parse
  // reviver, and it needs no source text access from the runtime.)
  return exactNumbers(text) ? write(value, 0) : undefined
}

function exactNumbers(text: string): boolean {
  TOKENS.lastIndex = 0
  try {
    for (let match = TOKENS.exec(text); match !== null; match = TOKENS.exec(text)) {
      const token = match[0]
      if (token.charCodeAt(0) !== 0x22 && JSON.stringify(Number(token)) !== token) return false
    }
  } catch {
    // A regular-expression engine out of backtracking stack: compare the raw bytes instead.
    return false
  }
  return true
}

// A string JSON.stringify writes as itself between quotes: printable, and no quote,
// backslash or surrogate (well-formed JSON.stringify escapes lone surrogates; pairs go the
// slow way too).
const PLAIN = /^[\u0020\u0021\u0023-\u005b\u005d-\ud7ff\ue000-\uffff]*$/

function quote(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text)
}

function write(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case 'string':
      return quote(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : undefined
    case 'object': {
      if (value === null) return 'null'
      if (depth >= MAX_CANONICAL_JSON_DEPTH) return undefined
      if (Array.isArray(value)) {
        let out = '['
        for (let index = 0; index < value.length; index++) {
          const item = write(value[index], depth + 1)
          if (item === undefined) return undefined
          out += index > 0 ? `,${item}` : item
        }
        return `${out}]`
      }
      const record = value as Record<string, unknown>
      // Default sort compares UTF-16 code units: RFC 8785 §3.2.3.
      const names = Object.keys(record).sort()
      let out = '{'
      for (let index = 0; index < names.length; index++) {
        const name = names[index] as string
        const member = write(record[name], depth + 1)
        if (member === undefined) return undefined
        out += `${index > 0 ? ',' : ''}${quote(name)}:${member}`
      }
      return `${out}}`
    }
    default:
      return undefined
  }
}
