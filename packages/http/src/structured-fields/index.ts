/**
 * Structured Field Values for HTTP (RFC 9651), complete: Items, Lists and Dictionaries, parsed
 * and serialised, with every bare item type (Integer, Decimal, String, Token, Byte Sequence,
 * Boolean, Date, Display String), Parameters and Inner Lists. New HTTP fields are defined as
 * structured fields (`RateLimit`, `Signature`, `Cache-Status`, `Priority` …); this is the one
 * implementation every api-blocks block uses.
 *
 * The parsers never throw: a value that is not valid, is not a string, or is longer than
 * {@link MAX_STRUCTURED_FIELD_LENGTH} is `undefined`, and RFC 9651 §4.2 says the whole field
 * is then ignored. The serialisers throw a TypeError for a value the syntax cannot carry.
 * Tested against the httpwg structured-field-tests suite.
 *
 * @example
 * ```ts
 * import { parseDictionary, serializeList } from '@api-blocks/http/structured-fields'
 *
 * const policy = serializeList([
 *   { value: { type: 'string', value: 'burst' }, params: [['q', { type: 'integer', value: 100 }]] },
 * ]) // '"burst";q=100'
 * const signatures = new Map(parseDictionary(request.headers.get('signature')) ?? [])
 * ```
 *
 * @see https://www.rfc-editor.org/rfc/rfc9651
 * @module
 */

export { parseDictionary, parseItem, parseList } from './parse.ts'
export {
  isInnerList,
  serializeBareItem,
  serializeDictionary,
  serializeItem,
  serializeList,
  serializeString,
} from './serialize.ts'
export type { BareItem, Dictionary, InnerList, Item, ListMember, Params } from './types.ts'
export { MAX_STRUCTURED_FIELD_LENGTH } from './types.ts'
