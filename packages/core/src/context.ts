/**
 * The per-request context: typed values that travel with one Request through the middleware
 * chain, without cloning it. Every block keeps its per-request state here (the request id,
 * the negotiated representation, the principal, the idempotent execution), each under its own
 * typed {@link ContextKey}, so there is one mechanism and the key says who owns a value.
 *
 * The values live in a Map held in a symbol-keyed slot of the Request object, so they vanish
 * with it. A slot on the object costs about 20 ns where a WeakMap entry costs about 450 ns and
 * more work for every garbage collection; a Request that cannot take a property (frozen,
 * sealed) falls back to a WeakMap. The slot's key comes from the `Symbol.for` registry, so two
 * installed copies of this package (a duplicate in node_modules) see the same context.
 *
 * The one rule: pass the same `Request` object down the chain. A middleware that must build a
 * new Request calls {@link copyContext} (`compose()` of `@api-blocks/http` does it for every
 * request a middleware hands on).
 *
 * @module
 */

type Values = Map<symbol, unknown>
type Carrier = object & { [SLOT]?: Values }

const SLOT: unique symbol = Symbol.for('api-blocks.context') as never
const FALLBACK_SLOT: unique symbol = Symbol.for('api-blocks.context.fallback') as never

// For requests that are not extensible; shared between copies of this package like SLOT.
function fallback(): WeakMap<object, Values> {
  const registry = globalThis as { [FALLBACK_SLOT]?: WeakMap<object, Values> }
  registry[FALLBACK_SLOT] ??= new WeakMap()
  return registry[FALLBACK_SLOT]
}

function valuesOf(request: object): Values | undefined {
  return (
    (request as Carrier)[SLOT] ??
    (globalThis as { [FALLBACK_SLOT]?: WeakMap<object, Values> })[FALLBACK_SLOT]?.get(request)
  )
}

function createValues(request: object): Values {
  const values: Values = new Map()
  if (Object.isExtensible(request)) (request as Carrier)[SLOT] = values
  else fallback().set(request, values)
  return values
}

/**
 * A typed key for one per-request value. Make one with {@link contextKey} (private to its
 * module) or {@link sharedContextKey} (the same key in every installed copy of a package).
 *
 * @example
 * ```ts
 * const tenantKey: ContextKey<string> = contextKey<string>('tenant')
 * ```
 */
export interface ContextKey<T> {
  readonly symbol: symbol
  /** Carries the value type only; never set. */
  readonly type?: (value: T) => T
}

/**
 * Makes a new context key. Every call returns a distinct key, even for the same description:
 * only code that holds the key reads or writes its value.
 *
 * @example
 * ```ts
 * const tenantKey = contextKey<string>('tenant')
 * setContext(request, tenantKey, 'acme')
 * getContext(request, tenantKey) // 'acme'
 * ```
 */
export function contextKey<T>(description: string): ContextKey<T> {
  return { symbol: Symbol(description) }
}

/**
 * The context key registered under `name`: the same key for every caller that names it, in
 * every installed copy of every package. A package uses it for values that must survive a
 * duplicate install of itself (its own copy A writes, copy B reads); prefix the name with the
 * package (`http.request-id`) so that names do not collide.
 *
 * @example
 * ```ts
 * const requestIdKey = sharedContextKey<string>('http.request-id')
 * ```
 */
export function sharedContextKey<T>(name: string): ContextKey<T> {
  return { symbol: Symbol.for(`api-blocks.context.${name}`) }
}

/**
 * Stores a value for one request.
 *
 * @example
 * ```ts
 * setContext(request, contextKey<number>('started'), 42)
 * ```
 */
export function setContext<T>(request: Request, key: ContextKey<T>, value: T): void {
  ;(valuesOf(request) ?? createValues(request)).set(key.symbol, value)
}

/**
 * Reads a value stored for one request, or `undefined`.
 *
 * @example
 * ```ts
 * const tenant = getContext(request, tenantKey) ?? 'default'
 * ```
 */
export function getContext<T>(request: Request, key: ContextKey<T>): T | undefined {
  return valuesOf(request)?.get(key.symbol) as T | undefined
}

/**
 * Removes a value from one request's context; answers whether there was one.
 *
 * @example
 * ```ts
 * deleteContext(request, tenantKey)
 * ```
 */
export function deleteContext<T>(request: Request, key: ContextKey<T>): boolean {
  return valuesOf(request)?.delete(key.symbol) ?? false
}

/**
 * Copies every context value of `from` onto `to`, for middleware that has to replace the
 * Request (for example to rewrite its URL). Values already on `to` are overwritten.
 *
 * @example
 * ```ts
 * const rewritten = new Request(new URL('/v2/orders', request.url), request)
 * copyContext(request, rewritten)
 * return next(rewritten)
 * ```
 */
export function copyContext(from: Request, to: Request): void {
  const values = valuesOf(from)
  if (values === undefined || values.size === 0) return
  const target = valuesOf(to) ?? createValues(to)
  for (const [symbol, value] of values) target.set(symbol, value)
}
