// Serialising Structured Field Values (RFC 9651 §4.1). A value the syntax cannot carry (an
// integer of 16 digits, a string with a control character, a key in upper case) is refused
// with a TypeError, never written in a form a parser would read differently.
import { encodeBase64 } from '@api-blocks/core'
import type { BareItem, InnerList, Item, ListMember, Params } from './types.ts'

const MAX_INTEGER = 999_999_999_999_999
const KEY = /^[a-z*][a-z0-9_\-.*]*$/
const TOKEN = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*$/
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

function refuse(what: string, value: unknown): never {
  throw new TypeError(`Structured field ${what} cannot be serialised: ${String(value)}`)
}

/**
 * Serialises a List (RFC 9651 §4.1.1): members joined by `, `. An empty list gives `''`:
 * send no field at all then.
 *
 * @example
 * ```ts
 * serializeList([{ value: { type: 'token', value: 'sugar' }, params: [] }]) // 'sugar'
 * ```
 */
export function serializeList(members: readonly ListMember[]): string {
  return members.map(serializeMember).join(', ')
}

/**
 * Serialises a Dictionary (RFC 9651 §4.1.2) from `[key, member]` pairs (an array, or a Map):
 * a member whose value is the boolean `true` is written as its key and parameters alone. An
 * empty dictionary gives `''`: send no field at all then. Repeated keys are refused.
 *
 * @example
 * ```ts
 * serializeDictionary([['a', { value: { type: 'integer', value: 1 }, params: [] }]]) // 'a=1'
 * ```
 */
export function serializeDictionary(members: Iterable<readonly [string, ListMember]>): string {
  const out: string[] = []
  const seen = new Set<string>()
  for (const [key, member] of members) {
    if (seen.has(key)) refuse('dictionary key (repeated)', key)
    seen.add(key)
    const name = serializeKey(key)
    if (!isInnerList(member) && member.value.type === 'boolean' && member.value.value) {
      out.push(name + serializeParams(member.params))
    } else {
      out.push(`${name}=${serializeMember(member)}`)
    }
  }
  return out.join(', ')
}

/**
 * Serialises an Item (RFC 9651 §4.1.3): its bare item and parameters.
 *
 * @example
 * ```ts
 * serializeItem({ value: { type: 'decimal', value: 4.5 }, params: [] }) // '4.5'
 * ```
 */
export function serializeItem(item: Item): string {
  return serializeBareItem(item.value) + serializeParams(item.params)
}

/**
 * Whether a List or Dictionary member is an Inner List (it has `items`), not an Item.
 *
 * @example
 * ```ts
 * const count = isInnerList(member) ? member.items.length : 1
 * ```
 */
export function isInnerList(member: ListMember): member is InnerList {
  return 'items' in member
}

function serializeMember(member: ListMember): string {
  if (!isInnerList(member)) return serializeItem(member)
  // §4.1.1.1: an Inner List
  return `(${member.items.map(serializeItem).join(' ')})${serializeParams(member.params)}`
}

/** §4.1.1.2: `;key`, then `=value` unless the value is the boolean true. */
function serializeParams(params: Params): string {
  let out = ''
  for (let index = 0; index < params.length; index++) {
    const [key, value] = params[index] as Params[number]
    // Parameter lists are short: a scan, rather than a Set for every item written.
    for (let before = 0; before < index; before++) {
      if (params[before]?.[0] === key) refuse('parameter key (repeated)', key)
    }
    out += `;${serializeKey(key)}`
    if (!(value.type === 'boolean' && value.value === true)) out += `=${serializeBareItem(value)}`
  }
  return out
}

/** §4.1.1.3 */
function serializeKey(key: string): string {
  if (typeof key !== 'string' || !KEY.test(key)) refuse('key', JSON.stringify(key))
  return key
}

/**
 * Serialises one bare item (RFC 9651 §4.1.3.1).
 *
 * @example
 * ```ts
 * serializeBareItem({ type: 'binary', value: new TextEncoder().encode('hello') }) // ':aGVsbG8=:'
 * ```
 */
export function serializeBareItem(item: BareItem): string {
  switch (item.type) {
    case 'integer':
      return serializeInteger(item.value)
    case 'decimal':
      return serializeDecimal(item.value)
    case 'string':
      return serializeString(item.value)
    case 'token':
      if (!TOKEN.test(item.value)) refuse('token', item.value)
      return item.value
    case 'binary':
      return `:${encodeBase64(item.value)}:`
    case 'boolean':
      return item.value ? '?1' : '?0'
    case 'date':
      return `@${serializeInteger(item.value)}`
    case 'displaystring':
      return serializeDisplayString(item.value)
    default:
      return refuse('bare item type', (item as { type?: unknown }).type)
  }
}

/** §4.1.4: at most 15 digits. */
function serializeInteger(value: number): string {
  if (!Number.isInteger(value) || Math.abs(value) > MAX_INTEGER) refuse('integer', value)
  return String(value + 0)
}

/**
 * §4.1.5: rounded to three decimal places, half to even, then at most 12 integer digits. The
 * rounding works on the shortest decimal form of the number (`String(0.0015)` is `0.0015`),
 * which is the decimal the caller meant: rounding the binary double instead would write
 * 0.0015 as 0.001 (its double is slightly below 0.0015).
 */
function serializeDecimal(value: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) refuse('decimal', value)
  const [whole, fraction] = plainDigits(Math.abs(value))
  // The digits of the number times 1000, truncated, and what was cut off.
  const kept = BigInt(whole + fraction.slice(0, 3).padEnd(3, '0'))
  const cut = fraction.slice(3)
  let thousandths = kept
  if (cut !== '') {
    const half = cut[0] === '5' && /^50*$/.test(cut)
    if (cut[0]! > '5' || (cut[0] === '5' && !half) || (half && kept % 2n === 1n)) thousandths += 1n
  }
  const integer = thousandths / 1000n
  if (integer > 999_999_999_999n) refuse('decimal (more than 12 integer digits)', value)
  const decimals = (thousandths % 1000n).toString().padStart(3, '0').replace(/0+$/, '') || '0'
  return `${value < 0 && thousandths > 0n ? '-' : ''}${integer}.${decimals}`
}

/** The integer and fraction digits of a non-negative finite number, without an exponent. */
function plainDigits(value: number): [string, string] {
  const text = String(value)
  const exponent = text.indexOf('e')
  if (exponent === -1) {
    const [whole = '0', fraction = ''] = text.split('.')
    return [whole, fraction]
  }
  const shift = Number(text.slice(exponent + 1))
  const [lead = '0', rest = ''] = text.slice(0, exponent).split('.')
  const digits = lead + rest
  const point = lead.length + shift
  if (point <= 0) return ['0', '0'.repeat(-point) + digits]
  if (point >= digits.length) return [digits + '0'.repeat(point - digits.length), '']
  return [digits.slice(0, point), digits.slice(point)]
}

/**
 * Serialises a String (RFC 9651 §4.1.6): printable ASCII only, `"` and `\` escaped. A value
 * with any other character is refused (TypeError): send a Display String for Unicode text.
 *
 * @example
 * ```ts
 * serializeString('say "hi"') // '"say \\"hi\\""'
 * ```
 */
export function serializeString(value: string): string {
  if (typeof value !== 'string' || !PRINTABLE_ASCII.test(value)) {
    refuse('string (printable ASCII only)', JSON.stringify(value))
  }
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`
}

const utf8 = new TextEncoder()

/** §4.1.11: UTF-8, with `%`, `"`, controls and non-ASCII bytes percent-encoded, lower case. */
function serializeDisplayString(value: string): string {
  if (typeof value !== 'string' || LONE_SURROGATE.test(value)) {
    refuse('display string (Unicode text only)', JSON.stringify(value))
  }
  let out = '%"'
  for (const byte of utf8.encode(value)) {
    if (byte === 0x25 || byte === 0x22 || byte <= 0x1f || byte >= 0x7f) {
      out += `%${byte.toString(16).padStart(2, '0')}`
    } else {
      out += String.fromCharCode(byte)
    }
  }
  return `${out}"`
}
