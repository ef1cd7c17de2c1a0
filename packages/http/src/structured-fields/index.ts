/**
 * Structured Field Values for HTTP (RFC 9651), the List type only: enough to write the
 * `RateLimit` and `RateLimit-Policy` fields of draft-ietf-httpapi-ratelimit-headers-10 and to
 * read them back. The parser never throws: a field it cannot parse is `undefined`, and per
 * RFC 9651 §4.2 the whole field is then ignored.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9651
 * @module
 */

/** An RFC 9651 bare item, tagged so that integer/decimal and string/token stay distinct. */
export type BareItem =
  | { readonly type: 'integer'; readonly value: number }
  | { readonly type: 'decimal'; readonly value: number }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'token'; readonly value: string }
  | { readonly type: 'binary'; readonly value: Uint8Array }
  | { readonly type: 'boolean'; readonly value: boolean }
  | { readonly type: 'date'; readonly value: number }
  | { readonly type: 'displaystring'; readonly value: string }

/** Ordered parameters; keys are unique. */
type SfParameters = ReadonlyArray<readonly [string, BareItem]>

/** A List member: an Item, or an Inner List (`items` present). */
export type ListMember =
  | { readonly value: BareItem; readonly params: SfParameters }
  | {
      readonly items: ReadonlyArray<{ value: BareItem; params: SfParameters }>
      readonly params: SfParameters
    }

/** Fields longer than this are not parsed (a documented input limit). */
export const MAX_STRUCTURED_FIELD_LENGTH = 8192

const MAX_INTEGER = 999_999_999_999_999
const KEY = /^[a-z*][a-z0-9_\-.*]*$/
const TOKEN = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*$/
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/

// ---------------------------------------------------------------------------------------------
// Serialisation (RFC 9651 §4.1). Throws a TypeError for a value the syntax cannot carry.

/** RFC 9651 §4.1.1: members joined by `, `. */
export function serializeList(members: readonly ListMember[]): string {
  return members.map(serializeMember).join(', ')
}

function serializeMember(member: ListMember): string {
  if ('items' in member) {
    // §4.1.1.1: an Inner List
    const inner = member.items.map(
      (item) => serializeBareItem(item.value) + serializeParams(item.params),
    )
    return `(${inner.join(' ')})${serializeParams(member.params)}`
  }
  return serializeBareItem(member.value) + serializeParams(member.params)
}

function serializeParams(params: SfParameters): string {
  let out = ''
  for (const [key, value] of params) {
    // §4.1.1.3: a key is lcalpha or "*", then lcalpha / DIGIT / "_" / "-" / "." / "*"
    if (!KEY.test(key)) throw new TypeError(`Invalid structured field key ${JSON.stringify(key)}`)
    out += `;${key}`
    if (!(value.type === 'boolean' && value.value)) out += `=${serializeBareItem(value)}`
  }
  return out
}

/** RFC 9651 §4.1.3.1: one bare item. */
export function serializeBareItem(item: BareItem): string {
  switch (item.type) {
    case 'integer':
      return serializeInteger(item.value)
    case 'decimal':
      return serializeDecimal(item.value)
    case 'string':
      return serializeString(item.value)
    case 'token':
      if (!TOKEN.test(item.value))
        throw new TypeError(`Invalid token ${JSON.stringify(item.value)}`)
      return item.value
    case 'binary':
      return `:${toBase64(item.value)}:`
    case 'boolean':
      return item.value ? '?1' : '?0'
    case 'date':
      return `@${serializeInteger(item.value)}`
    case 'displaystring':
      return serializeDisplayString(item.value)
  }
}

/** §4.1.4: at most 15 digits. */
function serializeInteger(value: number): string {
  if (!Number.isInteger(value) || Math.abs(value) > MAX_INTEGER) {
    throw new TypeError(`Structured field integer out of range: ${value}`)
  }
  return String(value)
}

/** §4.1.5: rounded to three decimals (half to even), at most 12 integer digits. */
function serializeDecimal(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`Structured field decimal ${value}`)
  const scaled = Math.abs(value) * 1000
  let thousandths = Math.floor(scaled)
  const rest = scaled - thousandths
  if (rest > 0.5 || (rest === 0.5 && thousandths % 2 === 1)) thousandths += 1
  const whole = Math.floor(thousandths / 1000)
  if (whole > 999_999_999_999) throw new TypeError(`Structured field decimal too large: ${value}`)
  const fraction =
    String(thousandths % 1000)
      .padStart(3, '0')
      .replace(/0+$/, '') || '0'
  return `${value < 0 && thousandths > 0 ? '-' : ''}${whole}.${fraction}`
}

/** §4.1.6: printable ASCII only; `"` and `\` escaped. */
export function serializeString(value: string): string {
  if (!/^[\x20-\x7E]*$/.test(value)) {
    throw new TypeError(`Structured field string must be printable ASCII: ${JSON.stringify(value)}`)
  }
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`
}

/** §4.1.11: UTF-8, with `%`, `"`, controls and non-ASCII bytes percent-encoded in lowercase. */
function serializeDisplayString(value: string): string {
  let out = '%"'
  for (const byte of new TextEncoder().encode(value)) {
    if (byte === 0x25 || byte === 0x22 || byte <= 0x1f || byte >= 0x7f) {
      out += `%${byte.toString(16).padStart(2, '0')}`
    } else {
      out += String.fromCharCode(byte)
    }
  }
  return `${out}"`
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

// ---------------------------------------------------------------------------------------------
// Parsing (RFC 9651 §4.2).

class Parser {
  readonly input: string
  at = 0
  constructor(input: string) {
    this.input = input
  }
  /** The next character, or '' at the end (a method, so that checks never narrow it). */
  char(): string {
    return this.input[this.at] ?? ''
  }
  get done(): boolean {
    return this.at >= this.input.length
  }
  skipSp(): void {
    while (this.char() === ' ') this.at++
  }
  skipOws(): void {
    while (this.char() === ' ' || this.char() === '\t') this.at++
  }
}

class Invalid extends Error {}
function fail(): never {
  throw new Invalid()
}

/**
 * Parses a List field value. `undefined` when the value is not a valid List or is longer than
 * {@link MAX_STRUCTURED_FIELD_LENGTH}; never throws.
 */
export function parseList(value: string): ListMember[] | undefined {
  if (typeof value !== 'string' || value.length > MAX_STRUCTURED_FIELD_LENGTH) return undefined
  // §4.2 steps 2-3: leading and trailing SP are discarded
  const parser = new Parser(value.replace(/^ +| +$/g, ''))
  try {
    return parseListMembers(parser)
  } catch (error) {
    if (error instanceof Invalid) return undefined
    throw error
  }
}

/** §4.2.1 */
function parseListMembers(p: Parser): ListMember[] {
  const members: ListMember[] = []
  while (!p.done) {
    members.push(p.char() === '(' ? parseInnerList(p) : parseItem(p))
    p.skipOws()
    if (p.done) return members
    if (p.char() !== ',') fail()
    p.at++
    p.skipOws()
    if (p.done) fail() // a trailing comma
  }
  return members
}

/** §4.2.1.2 */
function parseInnerList(p: Parser): ListMember {
  p.at++ // "("
  const items: { value: BareItem; params: SfParameters }[] = []
  while (!p.done) {
    p.skipSp()
    if (p.char() === ')') {
      p.at++
      return { items, params: parseParams(p) }
    }
    items.push(parseItem(p))
    if (p.char() !== ' ' && p.char() !== ')') fail()
  }
  return fail()
}

/** §4.2.3 */
function parseItem(p: Parser): { value: BareItem; params: SfParameters } {
  const value = parseBareItem(p)
  return { value, params: parseParams(p) }
}

/** §4.2.3.2: a repeated key keeps its first position and takes the last value. */
function parseParams(p: Parser): SfParameters {
  const params: [string, BareItem][] = []
  while (p.char() === ';') {
    p.at++
    p.skipSp()
    const key = parseKey(p)
    let value: BareItem = { type: 'boolean', value: true }
    if (p.char() === '=') {
      p.at++
      value = parseBareItem(p)
    }
    const existing = params.find(([name]) => name === key)
    if (existing === undefined) params.push([key, value])
    else existing[1] = value
  }
  return params
}

/** §4.2.3.3 */
function parseKey(p: Parser): string {
  if (!/[a-z*]/.test(p.char())) fail()
  const start = p.at
  while (/[a-z0-9_\-.*]/.test(p.char()) && !p.done) p.at++
  return p.input.slice(start, p.at)
}

/** §4.2.3.1 */
function parseBareItem(p: Parser): BareItem {
  const c = p.char()
  if (c === '-' || (c >= '0' && c <= '9')) return parseNumber(p)
  if (c === '"') return { type: 'string', value: parseString(p) }
  if (/[A-Za-z*]/.test(c) && c !== '') return { type: 'token', value: parseToken(p) }
  if (c === ':') return { type: 'binary', value: parseBinary(p) }
  if (c === '?') {
    const value = p.input[p.at + 1]
    if (value !== '0' && value !== '1') fail()
    p.at += 2
    return { type: 'boolean', value: value === '1' }
  }
  if (c === '@') {
    p.at++
    const number = parseNumber(p)
    if (number.type !== 'integer') fail()
    return { type: 'date', value: number.value }
  }
  if (c === '%') return { type: 'displaystring', value: parseDisplayString(p) }
  return fail()
}

/** §4.2.4 */
function parseNumber(p: Parser): BareItem {
  let sign = 1
  if (p.char() === '-') {
    sign = -1
    p.at++
  }
  if (!(p.char() >= '0' && p.char() <= '9') || p.done) fail()
  const start = p.at
  let decimal = false
  while (!p.done) {
    const c = p.char()
    if (c >= '0' && c <= '9') p.at++
    else if (c === '.' && !decimal) {
      if (p.at - start > 12) fail()
      decimal = true
      p.at++
    } else break
    if (!decimal && p.at - start > 15) fail()
    if (decimal && p.at - start > 16) fail()
  }
  const text = p.input.slice(start, p.at)
  // `+ 0` turns -0 into 0: "-0" is the integer zero.
  if (!decimal) return { type: 'integer', value: sign * Number(text) + 0 }
  const fraction = text.length - text.indexOf('.') - 1
  if (fraction < 1 || fraction > 3) fail()
  return { type: 'decimal', value: sign * Number(text) + 0 }
}

/** §4.2.5 */
function parseString(p: Parser): string {
  p.at++ // DQUOTE
  let out = ''
  while (!p.done) {
    const c = p.char()
    p.at++
    if (c === '\\') {
      const next = p.char()
      if (next !== '"' && next !== '\\') fail()
      out += next
      p.at++
    } else if (c === '"') {
      return out
    } else if (c < ' ' || c > '~') {
      fail()
    } else {
      out += c
    }
  }
  return fail()
}

/** §4.2.6 */
function parseToken(p: Parser): string {
  const start = p.at
  p.at++
  while (!p.done && TCHAR.test(p.char())) p.at++
  return p.input.slice(start, p.at)
}

/** §4.2.7: "=" padding may be absent; other non-base64 characters fail. */
function parseBinary(p: Parser): Uint8Array {
  p.at++ // ":"
  const end = p.input.indexOf(':', p.at)
  if (end === -1) fail()
  const text = p.input.slice(p.at, end)
  p.at = end + 1
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) fail()
  const unpadded = text.replace(/=+$/, '')
  if (unpadded.length % 4 === 1) fail()
  const binary = atob(unpadded + '='.repeat((4 - (unpadded.length % 4)) % 4))
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

/** §4.2.10 */
function parseDisplayString(p: Parser): string {
  if (p.input[p.at + 1] !== '"') fail()
  p.at += 2
  const bytes: number[] = []
  while (!p.done) {
    const c = p.char()
    p.at++
    if (c < ' ' || c > '~') fail()
    if (c === '%') {
      const hex = p.input.slice(p.at, p.at + 2)
      if (!/^[0-9a-f]{2}$/.test(hex)) fail()
      bytes.push(Number.parseInt(hex, 16))
      p.at += 2
    } else if (c === '"') {
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes))
      } catch {
        return fail()
      }
    } else {
      bytes.push(c.charCodeAt(0))
    }
  }
  return fail()
}
