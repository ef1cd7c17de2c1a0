/**
 * What blocks hand each other about a message body, so that no body is read, copied or parsed
 * twice on one request. Each hand-off is one typed accessor here, used by both sides:
 *
 * | accessor | provided by | read by |
 * |---|---|---|
 * | {@link wholeBodyOf} | a Request or Response that holds its body in memory (the node adapter's) | `readBody` of `@api-blocks/http`; the idempotency middleware (request and response) |
 * | {@link headerFieldsOf} | a Response whose fields were given as a plain record (the node adapter's) | the idempotency middleware, storing a response |
 * | {@link restoreBody} | a Request that can take back the bytes read from it (the node adapter's) | the idempotency middleware, handing the request on |
 * | {@link readWholeBody} | a Request that can read its body whole without a stream (the node adapter's) | `readRequestBody`, below its size check |
 * | {@link takeParsedJson} | the idempotency middleware, which parsed the body to fingerprint it ({@link handOnParsedJson}) | `readJson` of `@api-blocks/http` |
 *
 * A provider defines the first three and the whole read on its prototype with {@link defineBodySlots}; any other
 * Request or Response simply has none, and every reader then takes the ordinary path (a
 * stream, `headers`, a new Request). The slots are optimisations with the same observable
 * result as that path; the tests of each reader cover both.
 *
 * @module
 */
import type { ContextKey } from './context.ts'
import { deleteContext, getContext, setContext, sharedContextKey } from './context.ts'

const WHOLE_BODY: unique symbol = Symbol.for('api-blocks.whole-body') as never
const HEADER_FIELDS: unique symbol = Symbol.for('api-blocks.header-fields') as never
const RESTORE_BODY: unique symbol = Symbol.for('api-blocks.restore-body') as never
const READ_WHOLE: unique symbol = Symbol.for('api-blocks.read-whole-body') as never

interface Slotted {
  readonly [WHOLE_BODY]?: unknown
  readonly [HEADER_FIELDS]?: unknown
  readonly [RESTORE_BODY]?: unknown
  readonly [READ_WHOLE]?: unknown
}

/**
 * The body of a Request or Response that holds it in memory, read without consuming it: the
 * string or bytes it was given, `null` for no body; `undefined` when the body is a stream,
 * was read already, or the object keeps no such slot (read `body` then). The bytes are
 * shared: never change them, and read them through `byteOffset` and `byteLength` (they may be
 * a view into a larger buffer).
 *
 * @example
 * ```ts
 * const whole = wholeBodyOf(response)
 * const bytes = typeof whole === 'string' ? new TextEncoder().encode(whole) : whole
 * ```
 */
export function wholeBodyOf(message: Request | Response): string | Uint8Array | null | undefined {
  const whole = (message as Slotted)[WHOLE_BODY]
  return whole === null || typeof whole === 'string' || whole instanceof Uint8Array
    ? whole
    : undefined
}

/**
 * The header fields of a Response that was given them as a plain record and never built a
 * `Headers` object: a flat list `[name, value, name, value, …]`, names lower-cased and unique,
 * the default `content-type` of its body included. `undefined` otherwise (read `headers`
 * then). The list is shared: never change it.
 *
 * @example
 * ```ts
 * const fields = headerFieldsOf(response) ?? [...response.headers].flat()
 * ```
 */
export function headerFieldsOf(response: Response): readonly string[] | undefined {
  const fields = (response as Slotted)[HEADER_FIELDS]
  return Array.isArray(fields) ? (fields as readonly string[]) : undefined
}

/**
 * Gives a Request whose body was read back the bytes that were read, so that it can be handed
 * on as if unread (its body methods then answer those bytes, and {@link wholeBodyOf} does too).
 * Answers `false`, changing nothing, when the Request cannot (it keeps no such slot, its body
 * was not read, or it has none): build `new Request(request, { body: bytes })` then. The
 * bytes are given up: the caller must not change them afterwards.
 *
 * @example
 * ```ts
 * const bytes = await request.bytes()
 * const forwarded = restoreBody(request, bytes) ? request : new Request(request, { body: bytes })
 * ```
 */
export function restoreBody(request: Request, bytes: Uint8Array): boolean {
  const restore = (request as Slotted)[RESTORE_BODY]
  return typeof restore === 'function' && restore.call(request, bytes) === true
}

/**
 * Reads `request`'s body whole without a stream, when the Request can (the node adapter's
 * lightweight request, framed by a Content-Length within `maxBytes`, reads it straight from
 * node:http's message): a Promise of the bytes. `undefined` when it cannot: read the stream
 * then. The caller checks the limit on the bytes and the Content-Length before (the provider
 * may rely on it).
 *
 * `npm run bench -- oauth`: the token endpoint's 50-byte form, where building the stream, its
 * reader and the Response around it were about a third of reading the form (docs/benchmarks.md).
 *
 * @example
 * ```ts
 * const bytes = (await readWholeBody(request, 65_536)) ?? new Uint8Array(await request.arrayBuffer())
 * ```
 */
export function readWholeBody(request: Request, maxBytes: number): Promise<Uint8Array> | undefined {
  const read = (request as Slotted)[READ_WHOLE]
  if (typeof read !== 'function') return undefined
  const bytes: unknown = read.call(request, maxBytes)
  return bytes instanceof Promise ? bytes : undefined
}

/**
 * What a Request or Response class that keeps its body in memory answers through the slots;
 * `this` is the instance. Every member is optional.
 *
 * @example
 * ```ts
 * const slots: BodySlots<MyRequest> = { wholeBody() { return this.bytes } }
 * ```
 */
export interface BodySlots<T> {
  /** See {@link wholeBodyOf}. */
  wholeBody?: (this: T) => string | Uint8Array | null | undefined
  /** See {@link headerFieldsOf}. */
  headerFields?: (this: T) => readonly string[] | undefined
  /** See {@link restoreBody}. */
  restoreBody?: (this: T, bytes: Uint8Array) => boolean
  /** See {@link readWholeBody}. */
  readWholeBody?: (this: T, maxBytes: number) => Promise<Uint8Array> | undefined
}

/**
 * Installs the slots of a Request or Response class on its prototype (the provider side of
 * {@link wholeBodyOf}, {@link headerFieldsOf}, {@link restoreBody} and {@link readWholeBody}).
 *
 * @example
 * ```ts
 * defineBodySlots(MyResponse.prototype, { wholeBody() { return this.text } })
 * ```
 */
export function defineBodySlots<T extends object>(prototype: T, slots: BodySlots<T>): void {
  if (slots.wholeBody !== undefined) {
    Object.defineProperty(prototype, WHOLE_BODY, { get: slots.wholeBody, configurable: true })
  }
  if (slots.headerFields !== undefined) {
    Object.defineProperty(prototype, HEADER_FIELDS, { get: slots.headerFields, configurable: true })
  }
  if (slots.restoreBody !== undefined) {
    Object.defineProperty(prototype, RESTORE_BODY, { value: slots.restoreBody, configurable: true })
  }
  if (slots.readWholeBody !== undefined) {
    Object.defineProperty(prototype, READ_WHOLE, { value: slots.readWholeBody, configurable: true })
  }
}

interface ParsedJson {
  readonly bytes: Uint8Array
  readonly value: unknown
}

const PARSED_JSON: ContextKey<ParsedJson> = sharedContextKey('core.parsed-json')

/**
 * Hands the value a middleware parsed from `request`'s body on to a later `readJson`, which
 * then skips decoding and parsing the same bytes again. `bytes` must be the very array
 * {@link wholeBodyOf} answers for the request, and `value` what `JSON.parse` gives for them
 * decoded as strict UTF-8: the hand-off is taken only while both still hold.
 *
 * @example
 * ```ts
 * handOnParsedJson(request, bytes, JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)))
 * ```
 */
export function handOnParsedJson(request: Request, bytes: Uint8Array, value: unknown): void {
  setContext(request, PARSED_JSON, { bytes, value })
}

/**
 * The value handed on with {@link handOnParsedJson}, taken once (a second call answers
 * `undefined`), and only while the request's body is still those bytes, unread.
 *
 * @example
 * ```ts
 * const parsed = takeParsedJson(request)
 * const data = parsed !== undefined ? parsed.value : await request.json()
 * ```
 */
export function takeParsedJson(request: Request): { readonly value: unknown } | undefined {
  const parsed = getContext(request, PARSED_JSON)
  if (parsed === undefined) return undefined
  deleteContext(request, PARSED_JSON)
  return parsed.value !== undefined && wholeBodyOf(request) === parsed.bytes ? parsed : undefined
}
