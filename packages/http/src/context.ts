/**
 * Per-request context without cloning the Request: values live in a Map held in a
 * symbol-keyed slot of the `Request` object, so they vanish with it. Middleware in this
 * package stores the request id and the negotiation result there; read them with
 * {@link requestIdOf} and `negotiatedOf`.
 *
 * The slot's key comes from the `Symbol.for` registry, so two installed copies of this package
 * (a duplicate in node_modules) still see the same context. A slot on the object costs about
 * 20 ns where a WeakMap entry costs about 450 ns and more work for every garbage collection; a
 * Request that cannot take a property (frozen, sealed) falls back to a WeakMap.
 *
 * The one rule: pass the same `Request` object down the chain. A middleware that must build a
 * new Request calls {@link copyContext} so the new one carries the same values.
 *
 * @module
 */

import { requestIdKey } from './internal/keys.ts'

type Values = Map<symbol, unknown>
type Carrier = Request & { [SLOT]?: Values }

const SLOT: unique symbol = Symbol.for('api-blocks.http.context') as never
const FALLBACK_SLOT: unique symbol = Symbol.for('api-blocks.http.context.fallback') as never

// For requests that are not extensible; shared between copies of this package like SLOT.
function fallback(): WeakMap<Request, Values> {
  const registry = globalThis as { [FALLBACK_SLOT]?: WeakMap<Request, Values> }
  registry[FALLBACK_SLOT] ??= new WeakMap()
  return registry[FALLBACK_SLOT]
}

function valuesOf(request: Request): Values | undefined {
  return (
    (request as Carrier)[SLOT] ??
    (globalThis as { [FALLBACK_SLOT]?: WeakMap<Request, Values> })[FALLBACK_SLOT]?.get(request)
  )
}

function createValues(request: Request): Values {
  const values: Values = new Map()
  if (Object.isExtensible(request)) (request as Carrier)[SLOT] = values
  else fallback().set(request, values)
  return values
}

/**
 * A typed key for one per-request value. Make one with {@link contextKey}.
 */
export interface ContextKey<T> {
  readonly symbol: symbol
  /** Carries the value type only; never set. */
  readonly type?: (value: T) => T
}

/**
 * Makes a new context key. Every call returns a distinct key, even for the same description.
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

/**
 * The request id that the `requestId()` middleware accepted or generated for this request,
 * or `undefined` when that middleware is not in front of the caller.
 *
 * @example
 * ```ts
 * const handler: Handler = async (request) => Response.json({ id: requestIdOf(request) })
 * ```
 */
export function requestIdOf(request: Request): string | undefined {
  return getContext(request, requestIdKey)
}
