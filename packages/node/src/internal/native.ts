/**
 * The platform's own Request and Response classes (undici's, on Node), whatever the globals
 * are when this module loads. Libraries that replace the globals with lightweight classes
 * (this package with `lightweight: true`, `@hono/node-server` by default) chain their
 * prototypes to the native ones, so the native class is the root of the global's prototype
 * chain: walking up finds it, whichever library replaced the globals first and in whatever
 * order they were loaded.
 *
 * @module
 */

// The class whose prototype is the last one before Object.prototype in `global`'s chain.
function rootClass<T extends abstract new (...args: never[]) => unknown>(global: T): T {
  let prototype: object = global.prototype as object
  for (
    let parent = Object.getPrototypeOf(prototype) as object | null;
    parent !== null && parent !== Object.prototype;
    parent = Object.getPrototypeOf(parent) as object | null
  ) {
    prototype = parent
  }
  const root = (prototype as { constructor?: unknown }).constructor
  // A prototype whose `constructor` does not lead back to it is not a class we can trust:
  // keep the global itself.
  return typeof root === 'function' && root.prototype === prototype ? (root as T) : global
}

/** undici's Request, even when another library (or this one) replaced the global. */
export const NativeRequest: typeof Request = rootClass(globalThis.Request)

/** undici's Response, even when another library (or this one) replaced the global. */
export const NativeResponse: typeof Response = rootClass(globalThis.Response)

const tagOf = Object.prototype.toString
const inherits = Function.prototype[Symbol.hasInstance]

/**
 * Whether `value` is a Response: one whose prototype chain reaches the native Response (undici's
 * own, this package's lightweight one, `@hono/node-server`'s), or any other object that brands
 * itself a Response (`Symbol.toStringTag`, as every Fetch implementation does: another realm's,
 * the `undici` package's). It never compares against the current global class.
 */
export function isResponse(value: unknown): value is Response {
  return (
    typeof value === 'object' &&
    value !== null &&
    (inherits.call(NativeResponse, value) || tagOf.call(value) === '[object Response]')
  )
}
