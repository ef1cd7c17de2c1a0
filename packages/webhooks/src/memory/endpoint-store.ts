/**
 * The embedded, in-process {@link EndpointStore}: one `Map`, bounded in endpoints, with no
 * timers. Enough for one process; several processes need a shared store
 * (`PostgresEndpointStore` of `@api-blocks/postgres`).
 *
 * @module
 */
import type {
  EndpointListQuery,
  EndpointStore,
  EndpointUpdate,
  WebhookEndpoint,
} from '../endpoint-store.ts'

/**
 * Options of {@link MemoryEndpointStore}.
 *
 * @example
 * ```ts
 * const options: MemoryEndpointStoreOptions = { maxEndpoints: 1_000 }
 * const store = new MemoryEndpointStore(options)
 * ```
 */
export interface MemoryEndpointStoreOptions {
  /** The most endpoints held at once (default 10,000); at it, `insert` rejects with a `RangeError`. */
  readonly maxEndpoints?: number
}

const DEFAULT_MAX_ENDPOINTS = 10_000

/** A copy the caller may change without touching the stored record (and the other way round). */
function copy(endpoint: WebhookEndpoint): WebhookEndpoint {
  return {
    ...endpoint,
    events: endpoint.events === null ? null : [...endpoint.events],
    secrets: endpoint.secrets.map((secret) => ({ ...secret })),
  }
}

/** Code-unit order of ids (what `COLLATE "C"` gives in PostgreSQL). */
function byId(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * An in-memory {@link EndpointStore}. Atomic because each operation runs synchronously to its
 * end on the one JavaScript thread (no `await` between a read and the write it decides); every
 * operation answers a promise (a failure is a rejected promise, never a throw). Records go in
 * and come out as copies, so a caller cannot change a stored endpoint by mutating what it
 * passed or got. At `maxEndpoints`, `insert` rejects with a `RangeError` and nothing is evicted
 * (an endpoint is configuration, not cache).
 *
 * @example
 * ```ts
 * const store = new MemoryEndpointStore({ maxEndpoints: 1_000 })
 * await store.insert({
 *   id: 'we_1', url: 'https://hooks.example.com/orders', events: ['order.created'], status: 'enabled',
 *   disabledReason: null, secrets: [], owner: null, createdAt: 0, updatedAt: 0, version: 1,
 * })
 * console.log((await store.subscribed('order.created')).length) // 1
 * ```
 */
export class MemoryEndpointStore implements EndpointStore {
  /** The most endpoints held at once. */
  readonly maxEndpoints: number
  readonly #endpoints = new Map<string, WebhookEndpoint>()
  /** The ids in code-unit order, made again after an insert or a delete. */
  #sorted: string[] | undefined

  constructor(options: MemoryEndpointStoreOptions = {}) {
    const max = options.maxEndpoints ?? DEFAULT_MAX_ENDPOINTS
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError('MemoryEndpointStore: maxEndpoints must be a positive integer')
    }
    this.maxEndpoints = max
  }

  /** How many endpoints are held. */
  get size(): number {
    return this.#endpoints.size
  }

  insert(endpoint: WebhookEndpoint): Promise<void> {
    if (this.#endpoints.has(endpoint.id)) {
      return Promise.reject(
        new RangeError(`MemoryEndpointStore: an endpoint with the id ${endpoint.id} exists`),
      )
    }
    if (this.#endpoints.size >= this.maxEndpoints) {
      return Promise.reject(
        new RangeError(
          `MemoryEndpointStore is full (maxEndpoints ${this.maxEndpoints}): delete endpoints or raise the bound`,
        ),
      )
    }
    this.#endpoints.set(endpoint.id, copy(endpoint))
    this.#sorted = undefined
    return Promise.resolve()
  }

  get(id: string): Promise<WebhookEndpoint | undefined> {
    const endpoint = this.#endpoints.get(id)
    return Promise.resolve(endpoint === undefined ? undefined : copy(endpoint))
  }

  list(query: EndpointListQuery): Promise<WebhookEndpoint[]> {
    const page: WebhookEndpoint[] = []
    if (query.limit < 1) return Promise.resolve(page)
    for (const id of this.#ids()) {
      if (query.after !== undefined && id <= query.after) continue
      const endpoint = this.#endpoints.get(id)!
      if (query.owner !== undefined && endpoint.owner !== query.owner) continue
      page.push(copy(endpoint))
      if (page.length >= query.limit) break
    }
    return Promise.resolve(page)
  }

  subscribed(eventType: string): Promise<WebhookEndpoint[]> {
    const found: WebhookEndpoint[] = []
    for (const id of this.#ids()) {
      const endpoint = this.#endpoints.get(id)!
      if (endpoint.status !== 'enabled') continue
      if (endpoint.events !== null && !endpoint.events.includes(eventType)) continue
      found.push(copy(endpoint))
    }
    return Promise.resolve(found)
  }

  update(
    id: string,
    update: EndpointUpdate,
    expectedVersion?: number,
  ): Promise<WebhookEndpoint | undefined> {
    const current = this.#endpoints.get(id)
    if (current === undefined) return Promise.resolve(undefined)
    if (expectedVersion !== undefined && current.version !== expectedVersion) {
      return Promise.resolve(undefined)
    }
    const next: WebhookEndpoint = copy({
      ...current,
      ...(update.url === undefined ? {} : { url: update.url }),
      ...(update.events === undefined ? {} : { events: update.events }),
      ...(update.status === undefined ? {} : { status: update.status }),
      ...(update.disabledReason === undefined ? {} : { disabledReason: update.disabledReason }),
      ...(update.secrets === undefined ? {} : { secrets: update.secrets }),
      updatedAt: update.updatedAt,
      version: current.version + 1,
    })
    this.#endpoints.set(id, next)
    return Promise.resolve(copy(next))
  }

  delete(id: string): Promise<boolean> {
    const existed = this.#endpoints.delete(id)
    if (existed) this.#sorted = undefined
    return Promise.resolve(existed)
  }

  #ids(): readonly string[] {
    this.#sorted ??= [...this.#endpoints.keys()].sort(byId)
    return this.#sorted
  }
}
