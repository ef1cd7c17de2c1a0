/**
 * Per-request context without cloning the Request: values live in a WeakMap keyed by the
 * `Request` object, so they vanish with it. Middleware in this package stores the request id
 * and the negotiation result there; read them with {@link requestIdOf} and `negotiatedOf`.
 *
 * The map is shared through a `Symbol.for` registry slot, so two installed copies of this
 * package (a duplicate in node_modules) still see the same context.
 *
 * The one rule: pass the same `Request` object down the chain. A middleware that must build a
 * new Request calls {@link copyContext} so the new one carries the same values.
 *
 * @module
 */

import { requestIdKey } from './internal/keys.ts'

type Store = WeakMap<Request, Map<symbol, unknown>>

const STORE_SLOT: unique symbol = Symbol.for('api-blocks.http.context') as never

function store(): Store {
  const registry = globalThis as { [STORE_SLOT]?: Store }
  registry[STORE_SLOT] ??= new WeakMap()
  return registry[STORE_SLOT]
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
  const map = store()
  let values = map.get(request)
  if (values === undefined) {
    values = new Map()
    map.set(request, values)
  }
  values.set(key.symbol, value)
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
  return store().get(request)?.get(key.symbol) as T | undefined
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
  const values = store().get(from)
  if (values === undefined) return
  for (const [symbol, value] of values) setContext(to, { symbol }, value)
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
