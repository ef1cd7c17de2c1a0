/**
 * A Response that costs almost nothing to build. undici's constructor makes a ReadableStream
 * for every string body (about 10 µs here), while most API responses are a short string
 * written once to a socket. This class keeps the body and init as given and only builds the
 * native Response when something needs it (`body`, `text()`, `clone()` …). The node writer
 * reads the kept parts directly.
 *
 * Installed as `globalThis.Response` (see globals.ts), it must behave exactly as the native
 * class: the constructor validates what it keeps the way undici would and hands anything it
 * does not recognise to the native constructor, so errors and edge cases stay native.
 *
 * @module
 */

import { defineBodySlots } from '@api-blocks/core'
import { NodeAdapterError } from '../errors.ts'
import { isDisturbed } from './disturbed.ts'
import type { PlainHeaders } from './header-record.ts'
import { plainHeaders } from './header-record.ts'
import { NativeResponse } from './native.ts'

// Fetch's "extract a body" content type for a string.
const TEXT_TYPE = 'text/plain;charset=UTF-8'
const JSON_TYPE = 'application/json'

type KeptBody = string | Uint8Array | ReadableStream<Uint8Array> | null

/** What the writer needs of a Response that was never materialised. */
export interface ResponseParts {
  readonly status: number
  readonly statusText: string
  readonly body: string | Uint8Array | ReadableStream<Uint8Array> | null
  /** The live Headers, when anyone asked for them; otherwise `plain` holds the pairs. */
  readonly headers: Headers | undefined
  readonly plain: PlainHeaders | undefined
  /** The Content-Type the body implies when the headers carry none. */
  readonly defaultType: string | null
}

// Fetch "null body status" (the constructor's range check already excludes 101 and 103).
function isNullBodyStatus(status: number): boolean {
  return status === 204 || status === 205 || status === 304
}

let takeParts: (response: unknown) => ResponseParts | undefined
let wholeBodyOf: (response: FastResponse) => string | Uint8Array | null | undefined
let headerFieldsOf: (response: FastResponse) => readonly string[] | undefined

/**
 * A drop-in `Response`. Only the constructor, `Response.json` and the accessors run in this
 * class; everything that touches the body runs on a native Response built on first use.
 */
export class FastResponse {
  #status = 200
  #statusText = ''
  #body: KeptBody = null
  #plain: PlainHeaders | undefined
  #headers: Headers | undefined
  #defaultType: string | null = null
  #native: Response | undefined
  #used = false

  constructor(body?: BodyInit | null, init?: ResponseInit) {
    if (!this.#keep(body, init)) this.#adopt(new NativeResponse(body, init))
  }

  // Keeps body and init when they are of the kinds this class writes itself, after the
  // checks of Fetch "initialize a response"; returns false to defer to the native class.
  #keep(body: unknown, init: ResponseInit | undefined): boolean {
    let status = 200
    if (init !== undefined && init !== null) {
      if (typeof init !== 'object') return false
      const { status: given, statusText, headers } = init
      if (given !== undefined) {
        if (typeof given !== 'number' || !Number.isInteger(given) || given < 200 || given > 599)
          return false
        status = given
      }
      if (statusText !== undefined && statusText !== '') return false
      if (headers instanceof Headers) this.#headers = new Headers(headers)
      else if (headers !== undefined) {
        if (typeof headers !== 'object' || headers === null) return false
        this.#plain = plainHeaders(headers)
        if (this.#plain === undefined) return false
      }
    }
    if (body === undefined || body === null) this.#body = null
    else if (typeof body === 'string') {
      this.#body = body
      this.#defaultType = TEXT_TYPE
    } else if (body instanceof Uint8Array) this.#body = new Uint8Array(body)
    else if (body instanceof ArrayBuffer) this.#body = new Uint8Array(body.slice(0))
    else if (body instanceof ReadableStream) {
      if (body.locked || isDisturbed(body)) return false
      this.#body = body as ReadableStream<Uint8Array>
    } else return false
    if (this.#body !== null && isNullBodyStatus(status)) return false
    this.#status = status
    if (this.#defaultType !== null && this.#headers && !this.#headers.has('content-type')) {
      this.#headers.set('content-type', this.#defaultType)
    }
    return true
  }

  #adopt(native: Response): void {
    this.#native = native
    this.#status = native.status
    this.#statusText = native.statusText
    this.#headers = native.headers
    this.#plain = undefined
    this.#body = null
  }

  // The native twin, built once. Its headers are a copy; `headers` keeps answering ours.
  #materialise(): Response {
    if (this.#native !== undefined) return this.#native
    const native = new NativeResponse(this.#body as BodyInit | null, {
      status: this.#status,
      headers: this.headers,
    })
    // A body the writer already sent reads as used, as it would on a native Response.
    if (this.#used) void native.body?.cancel()
    this.#native = native
    return native
  }

  get status(): number {
    return this.#status
  }

  get ok(): boolean {
    return this.#status >= 200 && this.#status <= 299
  }

  get statusText(): string {
    return this.#statusText
  }

  get headers(): Headers {
    if (this.#headers === undefined) {
      const headers = new Headers()
      const flat = this.#plain?.flat ?? []
      for (let i = 0; i < flat.length; i += 2) headers.append(flat[i]!, flat[i + 1]!)
      if (this.#defaultType !== null && !this.#plain?.hasContentType) {
        headers.set('content-type', this.#defaultType)
      }
      this.#headers = headers
    }
    return this.#headers
  }

  get type(): ResponseType {
    return this.#native?.type ?? 'default'
  }

  get url(): string {
    return this.#native?.url ?? ''
  }

  get redirected(): boolean {
    return this.#native?.redirected ?? false
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#materialise().body
  }

  get bodyUsed(): boolean {
    if (this.#native !== undefined) return this.#native.bodyUsed
    return this.#used && this.#body !== null
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#consume((native) => native.arrayBuffer())
  }

  blob(): Promise<Blob> {
    return this.#consume((native) => native.blob())
  }

  bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#consume((native) => native.bytes())
  }

  formData(): Promise<FormData> {
    return this.#consume((native) => native.formData())
  }

  json(): Promise<unknown> {
    return this.#consume((native) => native.json())
  }

  text(): Promise<string> {
    return this.#consume((native) => native.text())
  }

  #consume<T>(read: (native: Response) => Promise<T>): Promise<T> {
    try {
      return read(this.#materialise())
    } catch (error) {
      return Promise.reject(error)
    }
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.')
    const copy = new FastResponse(null)
    if (this.#native === undefined && !(this.#body instanceof ReadableStream)) {
      // Strings and the private byte copy are immutable here, so the clone may share them.
      copy.#status = this.#status
      copy.#body = this.#body
      copy.#plain = this.#plain
      copy.#defaultType = this.#defaultType
      if (this.#headers !== undefined) copy.#headers = new Headers(this.#headers)
    } else {
      const headers = this.headers
      const native = this.#materialise()
      copy.#adopt(native.clone())
      // The native twin copied the headers when it was built; later changes live in ours.
      if (native.headers !== headers) replaceHeaders(copy.#headers!, headers)
    }
    return copy as unknown as Response
  }

  /**
   * `Response.json()`: the body is `JSON.stringify(data)` and Content-Type defaults to
   * `application/json`.
   */
  static json(data: unknown, init?: ResponseInit): Response {
    const body = JSON.stringify(data)
    if (body === undefined) throw new TypeError('Value is not JSON serializable')
    const response = new FastResponse(null, init)
    if (response.#native !== undefined || isNullBodyStatus(response.#status)) {
      // Let the native class apply (or reject) what this one does not keep.
      return NativeResponse.json(data, init)
    }
    response.#body = body
    response.#defaultType = JSON_TYPE
    if (response.#headers !== undefined && !response.#headers.has('content-type')) {
      response.#headers.set('content-type', JSON_TYPE)
    }
    return response as unknown as Response
  }

  /** `Response.error()`: a native network-error Response. */
  static error(): Response {
    return NativeResponse.error()
  }

  /** `Response.redirect()`: a native redirect Response. */
  static redirect(url: string | URL, status?: number): Response {
    return NativeResponse.redirect(url, status)
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    // Subclasses keep the ordinary prototype check. For the class itself, every Response
    // counts, including those undici makes (fetch results) that never saw this class.
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was called on
    if (this !== FastResponse) return Function.prototype[Symbol.hasInstance].call(this, value)
    return Function.prototype[Symbol.hasInstance].call(NativeResponse, value)
  }

  static {
    wholeBodyOf = (response) => {
      if (response.#native !== undefined || response.#used) return undefined
      return response.#body instanceof ReadableStream ? undefined : response.#body
    }
    headerFieldsOf = (response) => {
      if (response.#native !== undefined || response.#headers !== undefined) return undefined
      const flat = response.#plain?.flat ?? []
      if (response.#defaultType === null || response.#plain?.hasContentType) return flat
      return [...flat, 'content-type', response.#defaultType]
    }
    takeParts = (response) => {
      if (typeof response !== 'object' || response === null || !(#native in response)) {
        return undefined
      }
      if (response.#native !== undefined) return undefined
      if (response.#body !== null) {
        if (response.#used) {
          throw new NodeAdapterError('RESPONSE_BODY_USED', 'The response body was already sent.')
        }
        response.#used = true
      }
      return {
        status: response.#status,
        statusText: response.#statusText,
        body: response.#body,
        headers: response.#headers,
        plain: response.#plain,
        defaultType: response.#defaultType,
      }
    }
  }
}

Object.setPrototypeOf(FastResponse.prototype, NativeResponse.prototype)
Object.setPrototypeOf(FastResponse, NativeResponse)
Object.defineProperty(FastResponse, 'name', { value: 'Response' })
// The body hand-offs of core (`wholeBodyOf`, `headerFieldsOf`): middleware that stores or
// hashes a response (idempotency) reads the kept body and fields without building a native
// Response and a stream, or a Headers object the writer would then have to iterate.
defineBodySlots(FastResponse.prototype, {
  wholeBody(this: FastResponse) {
    return wholeBodyOf(this)
  },
  headerFields(this: FastResponse) {
    return headerFieldsOf(this)
  },
})

/**
 * The kept parts of a {@link FastResponse} that was never materialised, marking its body as
 * sent; `undefined` for any other Response (write it through its public API).
 */
export function takeResponseParts(response: unknown): ResponseParts | undefined {
  return takeParts(response)
}

function replaceHeaders(target: Headers, source: Headers): void {
  for (const name of [...target.keys()]) target.delete(name)
  for (const [name, value] of source) target.append(name, value)
}
