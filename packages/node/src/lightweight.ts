/**
 * The opt-in fast path: the lightweight classes as `globalThis.Request` and
 * `globalThis.Response`, so `new Response(...)` in any handler builds a {@link FastResponse}
 * and `new Request(request, init)` accepts the lazy request a handler receives. The rules:
 *
 * - nothing happens on import; {@link installLightweightGlobals} replaces the globals only when
 *   they are the platform's own classes (or already these), and leaves a global another
 *   library replaced (`@hono/node-server` does by default) alone;
 * - {@link restoreNativeGlobals} puts the native classes back, and only replaces globals that
 *   are still these;
 * - the property flags of the globals are kept;
 * - `instanceof Response` / `instanceof Request` stay true for native objects (fetch results,
 *   classes that extended the native ones before installation), through `Symbol.hasInstance`;
 *   the constructors' `name` stays `Response` / `Request`.
 *
 * @module
 */
import { FastResponse } from './internal/fast-response.ts'
import { rebodyRequest, unwrapIncomingRequest } from './internal/incoming-request.ts'
import { NativeRequest, NativeResponse } from './internal/native.ts'

function onlyBody(init: RequestInit): boolean {
  for (const key in init) if (key !== 'body' && key !== 'duplex') return false
  return true
}

/** `Request`, unwrapping the lazy request of this package; otherwise exactly the native class. */
export const FastRequest: typeof Request = class Request extends NativeRequest {
  // biome-ignore lint/correctness/noUnreachableSuper: returning another object from a derived constructor is allowed; the lightweight copy stands in
  constructor(input: RequestInfo | URL, init?: RequestInit) {
    // Only a new body (bytes) for the lazy request: stay lightweight (see rebodyRequest).
    if (init !== undefined && init.body instanceof Uint8Array && onlyBody(init)) {
      const rebodied = rebodyRequest(input, init.body)
      // biome-ignore lint/correctness/noConstructorReturn: see above
      if (rebodied !== undefined) return rebodied as unknown as Request
    }
    // Fetch "new Request" step 43: the input's body moves over unless init brings its own.
    super(unwrapIncomingRequest(input, init?.body == null) ?? input, init)
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was called on
    if (this !== FastRequest) return Function.prototype[Symbol.hasInstance].call(this, value)
    return Function.prototype[Symbol.hasInstance].call(NativeRequest, value)
  }
}

/** Whether the lightweight classes are the globals right now. */
export function lightweightGlobalsInstalled(): boolean {
  return globalThis.Request === FastRequest && globalThis.Response === FastResponse
}

function replaceGlobal(name: 'Request' | 'Response', value: unknown): void {
  // Keep the flags the platform gave the property (writable, enumerable, configurable).
  const {
    writable = true,
    enumerable = false,
    configurable = true,
  } = Object.getOwnPropertyDescriptor(globalThis, name) ?? {}
  Object.defineProperty(globalThis, name, { value, writable, enumerable, configurable })
}

/**
 * Replaces `globalThis.Request` and `globalThis.Response` with the lightweight classes of
 * `@api-blocks/node` (the fast path that `lightweight: true` opts into), when both globals are
 * still the platform's own classes. Answers whether the lightweight classes are the globals
 * afterwards: `true` when they were installed now or already, `false` when another library
 * replaced a global first (it is left alone, and adapters then build native objects).
 *
 * @example
 * ```ts
 * import { installLightweightGlobals, restoreNativeGlobals } from '@api-blocks/node'
 *
 * installLightweightGlobals() // true: `new Response('x')` now builds the lightweight Response
 * restoreNativeGlobals() // the native classes again
 * ```
 */
export function installLightweightGlobals(): boolean {
  if (lightweightGlobalsInstalled()) return true
  const { Request: request, Response: response } = globalThis
  if (
    (request !== NativeRequest && request !== FastRequest) ||
    (response !== NativeResponse && response !== FastResponse)
  ) {
    return false
  }
  replaceGlobal('Request', FastRequest)
  replaceGlobal('Response', FastResponse)
  return true
}

/**
 * Puts the platform's own `Request` and `Response` back where `installLightweightGlobals()`
 * (or `lightweight: true`) replaced them. A global another library replaced since is left
 * alone. Requests that arrive afterwards get native objects, also on adapters created with
 * `lightweight: true`; responses already built stay lightweight and are written as usual.
 *
 * @example
 * ```ts
 * import { restoreNativeGlobals } from '@api-blocks/node'
 *
 * restoreNativeGlobals()
 * console.log(new Response('x').constructor.name) // 'Response', undici's class
 * ```
 */
export function restoreNativeGlobals(): void {
  if (globalThis.Request === FastRequest) replaceGlobal('Request', NativeRequest)
  if (globalThis.Response === FastResponse) replaceGlobal('Response', NativeResponse)
}
