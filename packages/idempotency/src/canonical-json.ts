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
  const out: string[] = []
  return write(value, 0, out) ? out.join('') : undefined
}

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
  let exact = true
  try {
    // A number is canonical only when its text is what JSON.stringify writes for the double it
    // parses to: `9007199254740993` and `0.1000000000000000000001` are rounded by JSON.parse,
    // and `1.0` or `1e2` are spelled differently. Such bodies have no canonical form here and
    // are compared by their raw bytes, so two amounts that differ past double precision never
    // share a fingerprint. (JSON.parse source text access; where a runtime lacks it, every
    // body with a number is compared by its bytes.)
    value = JSON.parse(text, (_key, parsed: unknown, context?: { source?: string }) => {
      if (typeof parsed === 'number' && context?.source !== JSON.stringify(parsed)) exact = false
      return parsed
    }) as JsonValue
  } catch {
    return undefined
  }
  return exact ? canonicalJson(value) : undefined
}

function write(value: unknown, depth: number, out: string[]): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      out.push(JSON.stringify(value))
      return true
    case 'number':
      if (!Number.isFinite(value)) return false
      out.push(JSON.stringify(value))
      return true
    case 'object': {
      if (value === null) {
        out.push('null')
        return true
      }
      if (depth >= MAX_CANONICAL_JSON_DEPTH) return false
      if (Array.isArray(value)) {
        out.push('[')
        for (let index = 0; index < value.length; index++) {
          if (index > 0) out.push(',')
          if (!write(value[index], depth + 1, out)) return false
        }
        out.push(']')
        return true
      }
      const record = value as Record<string, unknown>
      // Default sort compares UTF-16 code units: RFC 8785 §3.2.3.
      const names = Object.keys(record).sort()
      out.push('{')
      for (let index = 0; index < names.length; index++) {
        const name = names[index] as string
        if (index > 0) out.push(',')
        out.push(JSON.stringify(name), ':')
        if (!write(record[name], depth + 1, out)) return false
      }
      out.push('}')
      return true
    }
    default:
      return false
  }
}
