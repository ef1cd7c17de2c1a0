/**
 * The one canonical JSON writer of api-blocks: two values that differ only in member order (or
 * two texts that differ only in whitespace too) give one text; a different value gives another.
 * Idempotency fingerprints and cursor filter hashes are built on it.
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
 * The deepest nesting of arrays and objects canonicalised. A deeper value has no canonical
 * form (`undefined`) rather than a thrown error, so hostile input cannot exhaust the stack;
 * callers fall back to its raw bytes.
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
  const tree = sortedTree(value, 0)
  if (tree === NONE) return undefined
  // JSON.stringify writes the members in enumeration order, which for an object with
  // integer-like names is not insertion order (ECMA-262 OrdinaryOwnPropertyKeys): those
  // objects, and values JSON.stringify would read otherwise (toJSON, other prototypes), are
  // written member by member.
  return tree === BY_HAND ? write(value, 0) : JSON.stringify(tree)
}

/** No canonical form: too deep, a number JSON cannot write, or not a JSON value. */
const NONE = Symbol('none')
/** A value {@link sortedTree} leaves to {@link write}. */
const BY_HAND = Symbol('by hand')

/**
 * `value` with the members of every object in code-unit order: the value itself where they
 * already are (the common case: nothing is copied), else copies of the objects (and the arrays
 * holding them) that are not; {@link NONE} or {@link BY_HAND} otherwise. One native
 * JSON.stringify of the result then writes the canonical text in a single flat string,
 * instead of a string built piece by piece.
 */
function sortedTree(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      return Number.isFinite(value) ? value : NONE
    case 'object':
      break
    default:
      return NONE
  }
  if (value === null) return null
  if (depth >= MAX_CANONICAL_JSON_DEPTH) return NONE
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype === Array.prototype) {
    const items = value as readonly unknown[]
    let copy: unknown[] | undefined
    for (let index = 0; index < items.length; index++) {
      const item = items[index]
      const sorted = sortedTree(item, depth + 1)
      if (sorted === NONE || sorted === BY_HAND) return sorted
      if (copy === undefined && sorted !== item) copy = items.slice(0, index)
      copy?.push(sorted)
    }
    return copy ?? items
  }
  if (prototype !== Object.prototype && prototype !== null) return BY_HAND
  const record = value as Record<string, unknown>
  const names = Object.keys(record)
  let inOrder = true
  for (let index = 1; index < names.length && inOrder; index++) {
    inOrder = (names[index - 1] as string) < (names[index] as string)
  }
  if (!inOrder) {
    // A copy enumerates in insertion order unless a name is integer-like (those come first,
    // in numeric order) or is __proto__ (an assignment would set the prototype).
    for (const name of names) {
      const first = name.charCodeAt(0)
      if ((first >= 0x30 && first <= 0x39) || name === '__proto__') return BY_HAND
    }
    sortNames(names)
  }
  let copy: Record<string, unknown> | undefined = inOrder ? undefined : {}
  for (let index = 0; index < names.length; index++) {
    const name = names[index] as string
    const member = record[name]
    const sorted = sortedTree(member, depth + 1)
    if (sorted === NONE || sorted === BY_HAND) return sorted
    if (copy === undefined && sorted !== member) {
      // Already in order, so the copy enumerates as the original does (integer-like names
      // included); only __proto__ cannot be assigned. The members before this one as they are.
      if (names.includes('__proto__')) return BY_HAND
      copy = {}
      for (let before = 0; before < index; before++) {
        const earlier = names[before] as string
        copy[earlier] = record[earlier]
      }
    }
    if (copy !== undefined) copy[name] = sorted
  }
  return copy ?? record
}

/**
 * Sorts member names in place by UTF-16 code units (RFC 8785 §3.2.3), as the default sort
 * does: by insertion for the few names of a typical object, which allocates nothing.
 */
function sortNames(names: string[]): void {
  if (names.length > 16) {
    names.sort()
    return
  }
  for (let index = 1; index < names.length; index++) {
    const name = names[index] as string
    let at = index - 1
    while (at >= 0 && (names[at] as string) > name) {
      names[at + 1] = names[at] as string
      at--
    }
    names[at + 1] = name
  }
}

/**
 * Parses `text` as JSON (RFC 8259) and returns its canonical text, or `undefined` when it is
 * not JSON or has no canonical form (see {@link canonicalJson} and {@link parseJsonCanonical}).
 * Never throws.
 *
 * @example
 * ```ts
 * canonicalizeJsonText('{ "b": 2,\n  "a": 1 }') // '{"a":1,"b":2}'
 * canonicalizeJsonText('{"a":') // undefined
 * ```
 */
export function canonicalizeJsonText(text: string): string | undefined {
  return parseJsonCanonical(text)?.canonical
}

/**
 * What {@link parseJsonCanonical} gives for a JSON text.
 *
 * @example
 * ```ts
 * const parsed: ParsedCanonicalJson | undefined = parseJsonCanonical('{"a":1}')
 * ```
 */
export interface ParsedCanonicalJson {
  /** What `JSON.parse` gives for the text. */
  readonly value: unknown
  /** The canonical text, or `undefined` when the value has none that keeps its meaning. */
  readonly canonical: string | undefined
}

/**
 * Parses `text` as JSON once and gives both the value and its canonical text; `undefined` when
 * the text is not JSON. Never throws.
 *
 * A number is canonical only when its text is what JSON.stringify writes for the double it
 * parses to: `9007199254740993` and `0.1000000000000000000001` are rounded by JSON.parse, and
 * `1.0`, `-0` or `1e2` are spelled differently. A text holding such a number has no canonical
 * form (`canonical` is undefined): two amounts that differ past double precision must never
 * compare equal, so compare such texts by their bytes.
 *
 * @example
 * ```ts
 * parseJsonCanonical('{ "b": 1, "a": 2 }') // { value: { b: 1, a: 2 }, canonical: '{"a":2,"b":1}' }
 * parseJsonCanonical('{"n": 1.0}')?.canonical // undefined
 * ```
 */
export function parseJsonCanonical(text: string): ParsedCanonicalJson | undefined {
  let value: JsonValue
  try {
    value = JSON.parse(text) as JsonValue
  } catch {
    return undefined
  }
  // (A scan of the number tokens: cheaper than a JSON.parse reviver, and it needs no source
  // text access from the runtime.)
  return { value, canonical: exactNumbers(text) ? canonicalJson(value) : undefined }
}

/**
 * Whether every number token of `text` (valid JSON: JSON.parse accepted it) is spelled as
 * JSON.stringify writes the double it parses to. Outside strings only numbers hold digits,
 * and a number runs over `-`, digits, `.`, `e`, `E` and `+` (RFC 8259 §6). An integer of at
 * most 15 digits (and not `-0`) is always exact and is checked without allocating.
 */
function exactNumbers(text: string): boolean {
  const length = text.length
  let at = 0
  while (at < length) {
    const code = text.charCodeAt(at)
    if (code === 0x22) {
      // A string: to the next quote not escaped (preceded by an even run of backslashes).
      for (;;) {
        const quote = text.indexOf('"', at + 1)
        if (quote === -1) return true
        let slashes = 0
        while (text.charCodeAt(quote - 1 - slashes) === 0x5c) slashes++
        at = quote
        if (slashes % 2 === 0) break
      }
      at++
    } else if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      const start = at
      const first = code === 0x2d ? at + 1 : at
      let integer = true
      for (at++; at < length; at++) {
        const next = text.charCodeAt(at)
        if (next >= 0x30 && next <= 0x39) continue
        if (next === 0x2e || next === 0x65 || next === 0x45 || next === 0x2b || next === 0x2d) {
          integer = false
        } else break
      }
      const digits = at - first
      const zero = text.charCodeAt(first) === 0x30
      if (integer && digits <= 15 && !(zero && (digits > 1 || first > start))) continue
      const token = text.slice(start, at)
      if (JSON.stringify(Number(token)) !== token) return false
    } else at++
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
      // A Date, a Map, a class instance: not a value JSON.parse gives, so no canonical form.
      const prototype: unknown = Object.getPrototypeOf(value)
      if (prototype !== Object.prototype && prototype !== null) return undefined
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
