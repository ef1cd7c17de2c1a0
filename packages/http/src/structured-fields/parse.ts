// Parsing Structured Field Values (RFC 9651 §4.2). Each function follows the algorithm of the
// section it names. Failure is an exception inside the parser (one class, caught at the entry
// points), so that no caller ever sees one: a field that does not parse is `undefined`, and
// RFC 9651 §4.2 says the whole field is then ignored.
import { decodeBase64 } from '@api-blocks/core'
import type { BareItem, Dictionary, InnerList, Item, ListMember, Params } from './types.ts'
import { MAX_STRUCTURED_FIELD_LENGTH } from './types.ts'

class Invalid extends Error {}
function fail(): never {
  throw new Invalid()
}

const SP = 0x20
const HTAB = 0x09
const DQUOTE = 0x22

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39
const isAlpha = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
const isLcAlpha = (c: number): boolean => c >= 0x61 && c <= 0x7a
// RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" /
// "_" / "`" / "|" / "~" / DIGIT / ALPHA
const TCHAR_SYMBOLS = "!#$%&'*+-.^_`|~"
const isTchar = (c: number): boolean =>
  isDigit(c) || isAlpha(c) || (c < 0x80 && TCHAR_SYMBOLS.includes(String.fromCharCode(c)))
// §4.2.3.3: key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )
const isKeyChar = (c: number): boolean =>
  isLcAlpha(c) || isDigit(c) || c === 0x5f || c === 0x2d || c === 0x2e || c === 0x2a

/** The input being parsed and the position in it. */
class Input {
  readonly text: string
  at = 0
  constructor(text: string) {
    this.text = text
  }
  /** The next character's code, or -1 at the end. */
  peek(): number {
    return this.at < this.text.length ? this.text.charCodeAt(this.at) : -1
  }
  get done(): boolean {
    return this.at >= this.text.length
  }
  skipSp(): void {
    while (this.peek() === SP) this.at++
  }
  skipOws(): void {
    for (let c = this.peek(); c === SP || c === HTAB; c = this.peek()) this.at++
  }
}

/**
 * §4.2 steps 1 to 5 around one top-level parser: ASCII only, leading and trailing SP
 * discarded, nothing may follow. Anything not a string, or longer than the limit, is
 * `undefined`.
 */
function parseField<T>(value: unknown, parse: (input: Input) => T): T | undefined {
  if (typeof value !== 'string' || value.length > MAX_STRUCTURED_FIELD_LENGTH) return undefined
  // Step 1: the field value must be ASCII.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is the point
  if (/[^\x00-\x7f]/.test(value)) return undefined
  const input = new Input(value)
  try {
    input.skipSp()
    const result = parse(input)
    input.skipSp()
    return input.done ? result : undefined
  } catch (error) {
    if (error instanceof Invalid) return undefined
    throw error
  }
}

/**
 * Parses an Item field (RFC 9651 §4.2.3). `undefined` when the value is not a valid Item, is
 * not a string, or is longer than `MAX_STRUCTURED_FIELD_LENGTH`; never throws. Pass several
 * field lines as `headers.get()` gives them, joined by `, `.
 *
 * @example
 * ```ts
 * parseItem('5;foo=bar') // { value: { type: 'integer', value: 5 }, params: [['foo', { type: 'token', value: 'bar' }]] }
 * ```
 */
export function parseItem(value: string | null | undefined): Item | undefined {
  return parseField(value, parseItemAt)
}

/**
 * Parses a List field (RFC 9651 §4.2.1): `[]` for an empty value; `undefined` when the value
 * is not a valid List, is not a string, or is longer than `MAX_STRUCTURED_FIELD_LENGTH`;
 * never throws.
 *
 * @example
 * ```ts
 * parseList(request.headers.get('example-list')) // [{ value: { type: 'token', value: 'sugar' }, params: [] }, …]
 * ```
 */
export function parseList(value: string | null | undefined): ListMember[] | undefined {
  return parseField(value, parseListAt)
}

/**
 * Parses a Dictionary field (RFC 9651 §4.2.2) into ordered `[key, member]` pairs: `[]` for an
 * empty value; `undefined` when the value is not a valid Dictionary, is not a string, or is
 * longer than `MAX_STRUCTURED_FIELD_LENGTH`; never throws. A repeated key keeps its first
 * place and takes the last value.
 *
 * @example
 * ```ts
 * const signatures = new Map(parseDictionary(request.headers.get('signature')) ?? [])
 * ```
 */
export function parseDictionary(value: string | null | undefined): Dictionary | undefined {
  return parseField(value, parseDictionaryAt)
}

/** §4.2.1 */
function parseListAt(input: Input): ListMember[] {
  const members: ListMember[] = []
  while (!input.done) {
    members.push(parseItemOrInnerList(input))
    input.skipOws()
    if (input.done) return members
    if (input.peek() !== 0x2c) fail() // ","
    input.at++
    input.skipOws()
    if (input.done) fail() // a trailing comma
  }
  return members
}

/** §4.2.1.1 */
function parseItemOrInnerList(input: Input): ListMember {
  return input.peek() === 0x28 ? parseInnerList(input) : parseItemAt(input)
}

/** §4.2.1.2 */
function parseInnerList(input: Input): InnerList {
  input.at++ // "("
  const items: Item[] = []
  while (!input.done) {
    input.skipSp()
    if (input.peek() === 0x29) {
      input.at++ // ")"
      return { items, params: parseParams(input) }
    }
    items.push(parseItemAt(input))
    const next = input.peek()
    if (next !== SP && next !== 0x29) fail()
  }
  return fail() // no closing parenthesis
}

/** §4.2.2: a repeated key keeps its first place and takes the last value. */
function parseDictionaryAt(input: Input): Dictionary {
  const members: [string, ListMember][] = []
  const index = new Map<string, number>()
  while (!input.done) {
    const key = parseKey(input)
    let member: ListMember
    if (input.peek() === 0x3d) {
      input.at++ // "="
      member = parseItemOrInnerList(input)
    } else {
      member = { value: { type: 'boolean', value: true }, params: parseParams(input) }
    }
    const at = index.get(key)
    if (at === undefined) {
      index.set(key, members.length)
      members.push([key, member])
    } else {
      members[at] = [key, member]
    }
    input.skipOws()
    if (input.done) return members
    if (input.peek() !== 0x2c) fail()
    input.at++
    input.skipOws()
    if (input.done) fail()
  }
  return members
}

/** §4.2.3 */
function parseItemAt(input: Input): Item {
  const value = parseBareItem(input)
  return { value, params: parseParams(input) }
}

/** §4.2.3.1 */
function parseBareItem(input: Input): BareItem {
  const c = input.peek()
  if (c === 0x2d || isDigit(c)) return parseNumber(input)
  if (c === DQUOTE) return { type: 'string', value: parseString(input) }
  if (isAlpha(c) || c === 0x2a) return { type: 'token', value: parseToken(input) }
  if (c === 0x3a) return { type: 'binary', value: parseByteSequence(input) }
  if (c === 0x3f) return { type: 'boolean', value: parseBoolean(input) }
  if (c === 0x40) return { type: 'date', value: parseDate(input) }
  if (c === 0x25) return { type: 'displaystring', value: parseDisplayString(input) }
  return fail()
}

/** §4.2.3.2: a repeated key keeps its first place and takes the last value. */
function parseParams(input: Input): Params {
  const params: [string, BareItem][] = []
  while (input.peek() === 0x3b) {
    input.at++ // ";"
    input.skipSp()
    const key = parseKey(input)
    let value: BareItem = { type: 'boolean', value: true }
    if (input.peek() === 0x3d) {
      input.at++
      value = parseBareItem(input)
    }
    const existing = params.find(([name]) => name === key)
    if (existing === undefined) params.push([key, value])
    else existing[1] = value
  }
  return params
}

/** §4.2.3.3 */
function parseKey(input: Input): string {
  const first = input.peek()
  if (!isLcAlpha(first) && first !== 0x2a) fail()
  const start = input.at
  input.at++
  while (isKeyChar(input.peek())) input.at++
  return input.text.slice(start, input.at)
}

/** §4.2.4: at most 15 integer digits; a decimal has at most 12 before the point and 3 after. */
function parseNumber(input: Input): BareItem {
  let sign = 1
  if (input.peek() === 0x2d) {
    sign = -1
    input.at++
  }
  if (!isDigit(input.peek())) fail()
  const start = input.at
  let decimal = false
  for (let c = input.peek(); c !== -1; c = input.peek()) {
    if (isDigit(c)) input.at++
    else if (c === 0x2e && !decimal) {
      if (input.at - start > 12) fail()
      decimal = true
      input.at++
    } else break
    const length = input.at - start
    if (length > (decimal ? 16 : 15)) fail()
  }
  const text = input.text.slice(start, input.at)
  // `+ 0` turns -0 into 0: "-0" is the number zero.
  if (!decimal) return { type: 'integer', value: sign * Number(text) + 0 }
  const fraction = text.length - text.indexOf('.') - 1
  if (fraction < 1 || fraction > 3) fail()
  return { type: 'decimal', value: sign * Number(text) + 0 }
}

/** §4.2.5 */
function parseString(input: Input): string {
  input.at++ // DQUOTE
  let out = ''
  let run = input.at
  while (!input.done) {
    const c = input.peek()
    if (c === 0x5c) {
      // "\": only DQUOTE and "\" may be escaped.
      const next = input.text.charCodeAt(input.at + 1)
      if (next !== DQUOTE && next !== 0x5c) fail()
      out += input.text.slice(run, input.at) + String.fromCharCode(next)
      input.at += 2
      run = input.at
    } else if (c === DQUOTE) {
      out += input.text.slice(run, input.at)
      input.at++
      return out
    } else if (c < 0x20 || c > 0x7e) {
      fail()
    } else {
      input.at++
    }
  }
  return fail() // no closing quote
}

/** §4.2.6: tchar, ":" and "/" after a first ALPHA or "*". */
function parseToken(input: Input): string {
  const start = input.at
  input.at++
  for (let c = input.peek(); isTchar(c) || c === 0x3a || c === 0x2f; c = input.peek()) input.at++
  return input.text.slice(start, input.at)
}

/**
 * §4.2.7. The RFC asks parsers not to fail for missing "=" padding or non-zero pad bits
 * (SHOULD NOT): core's decoder in its `loose` mode accepts both, so `:aGVsbG8:` and `:iZ==:`
 * read as `hello` and `0x89`.
 */
function parseByteSequence(input: Input): Uint8Array {
  input.at++ // ":"
  const end = input.text.indexOf(':', input.at)
  if (end === -1) fail()
  const content = input.text.slice(input.at, end)
  input.at = end + 1
  return decodeBase64(content, { loose: true }) ?? fail()
}

/** §4.2.8 */
function parseBoolean(input: Input): boolean {
  const value = input.text.charCodeAt(input.at + 1)
  if (value !== 0x30 && value !== 0x31) fail()
  input.at += 2
  return value === 0x31
}

/** §4.2.9: an integer number of seconds. */
function parseDate(input: Input): number {
  input.at++ // "@"
  const number = parseNumber(input)
  if (number.type !== 'integer') fail()
  return number.value
}

const LOWER_HEX = /^[0-9a-f]{2}$/
// fatal: a Display String that is not UTF-8 fails (§4.2.10 step 8.2.2).
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** §4.2.10: printable ASCII with lower-case `%xx` escapes of UTF-8 bytes. */
function parseDisplayString(input: Input): string {
  if (input.text.charCodeAt(input.at + 1) !== DQUOTE) fail()
  input.at += 2
  const bytes: number[] = []
  while (!input.done) {
    const c = input.peek()
    input.at++
    if (c < 0x20 || c > 0x7e) fail()
    if (c === 0x25) {
      const hex = input.text.slice(input.at, input.at + 2)
      if (!LOWER_HEX.test(hex)) fail()
      bytes.push(Number.parseInt(hex, 16))
      input.at += 2
    } else if (c === DQUOTE) {
      try {
        return utf8.decode(new Uint8Array(bytes))
      } catch {
        return fail()
      }
    } else {
      bytes.push(c)
    }
  }
  return fail() // no closing quote
}
