/**
 * Installing the lightweight classes as `globalThis.Request` and `globalThis.Response`, so
 * `new Response(...)` in any handler builds a {@link FastResponse}. What keeps this safe:
 *
 * - `instanceof Response` / `instanceof Request` stay true for native objects (fetch results,
 *   classes that extended the native ones before installation), through `Symbol.hasInstance`;
 * - the constructors' `name` stays `Response` / `Request`;
 * - `new Request(incomingRequest, init)` unwraps the lazy request into a native one;
 * - nothing happens at import time, only when an adapter is created with `lightweight` on;
 * - a global already replaced by someone else (another library) is left alone.
 *
 * @module
 */
import { FastResponse, NATIVE, NativeResponse } from './fast-response.ts'
import { NativeRequest, rebodyRequest, unwrapIncomingRequest } from './incoming-request.ts'

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
Object.defineProperty(FastRequest, NATIVE, { value: NativeRequest })
Object.defineProperty(FastResponse, 'name', { value: 'Response' })

/**
 * Replaces the global Request and Response with the lightweight ones, once. Returns whether
 * they are in place (false when another library replaced the globals first).
 */
export function installFastGlobals(): boolean {
  const scope = globalThis as { Request: unknown; Response: unknown }
  if (scope.Response === FastResponse && scope.Request === FastRequest) return true
  if (scope.Response !== NativeResponse || scope.Request !== NativeRequest) return false
  for (const [name, value] of [
    ['Request', FastRequest],
    ['Response', FastResponse],
  ] as const) {
    const {
      writable = true,
      enumerable = false,
      configurable = true,
    } = Object.getOwnPropertyDescriptor(globalThis, name) ?? {}
    Object.defineProperty(globalThis, name, { value, writable, enumerable, configurable })
  }
  return true
}

/** Puts the native classes back (tests, or an application that wants them back). */
export function restoreNativeGlobals(): void {
  const scope = globalThis as { Request: unknown; Response: unknown }
  if (scope.Request === FastRequest) scope.Request = NativeRequest
  if (scope.Response === FastResponse) scope.Response = NativeResponse
}
