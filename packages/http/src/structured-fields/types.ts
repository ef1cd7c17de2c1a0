// The data model of Structured Field Values (RFC 9651 §3), shared by the parser and the
// serialiser.

/**
 * An RFC 9651 bare item (§3.3), tagged so that integer and decimal, string, token and display
 * string stay distinct. A `date` is seconds since the epoch; `binary` holds the bytes.
 *
 * @example
 * ```ts
 * const item: BareItem = { type: 'token', value: 'gzip' }
 * ```
 */
export type BareItem =
  | { readonly type: 'integer'; readonly value: number }
  | { readonly type: 'decimal'; readonly value: number }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'token'; readonly value: string }
  | { readonly type: 'binary'; readonly value: Uint8Array }
  | { readonly type: 'boolean'; readonly value: boolean }
  | { readonly type: 'date'; readonly value: number }
  | { readonly type: 'displaystring'; readonly value: string }

/**
 * Parameters (§3.1.2): ordered `[key, value]` pairs with unique keys. A parameter without a
 * value is the boolean `true`.
 *
 * @example
 * ```ts
 * const params: Params = [['q', { type: 'decimal', value: 0.5 }], ['final', { type: 'boolean', value: true }]]
 * ```
 */
export type Params = ReadonlyArray<readonly [string, BareItem]>

/**
 * An Item (§3.3): a bare item with parameters.
 *
 * @example
 * ```ts
 * const item: Item = { value: { type: 'integer', value: 5 }, params: [] }
 * ```
 */
export interface Item {
  readonly value: BareItem
  readonly params: Params
}

/**
 * An Inner List (§3.1.1): items in parentheses, with parameters of its own.
 *
 * @example
 * ```ts
 * const inner: InnerList = { items: [{ value: { type: 'token', value: 'a' }, params: [] }], params: [] }
 * ```
 */
export interface InnerList {
  readonly items: readonly Item[]
  readonly params: Params
}

/**
 * A member of a List or a Dictionary: an Item, or an Inner List (which has `items`).
 *
 * @example
 * ```ts
 * const member: ListMember = { value: { type: 'string', value: 'burst' }, params: [] }
 * if ('items' in member) console.log('an inner list')
 * ```
 */
export type ListMember = Item | InnerList

/**
 * A Dictionary (§3.2): ordered `[key, member]` pairs with unique keys. A member whose value is
 * the boolean `true` is written as its key alone. `new Map(dictionary)` gives lookups by key.
 *
 * @example
 * ```ts
 * const dictionary: Dictionary = [['sig1', { value: { type: 'binary', value: new Uint8Array(32) }, params: [] }]]
 * ```
 */
export type Dictionary = ReadonlyArray<readonly [string, ListMember]>

/**
 * The longest field value the parsers read, in characters: 32 KiB. Every minimum size RFC 9651
 * §3 asks implementations to support fits (the largest, a 16384-byte Byte Sequence, is 21850
 * characters); a longer value is not parsed (`undefined`). Keep header values shorter still
 * where they reach the server (`limits()` refuses values over 8192 characters by default).
 *
 * @example
 * ```ts
 * if (value.length > MAX_STRUCTURED_FIELD_LENGTH) console.log('ignored')
 * ```
 */
export const MAX_STRUCTURED_FIELD_LENGTH = 32_768
