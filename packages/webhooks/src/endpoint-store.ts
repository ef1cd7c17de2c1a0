/**
 * The endpoint registry's store contract: where receiver endpoints (URL, selected event types,
 * signing secrets, status) live. The registry (`createEndpointRegistry`) holds the rules
 * (URL checks, secret issue and rotation, ownership); a store only keeps records and does one
 * compare-and-set. `MemoryEndpointStore` is the embedded default; `@api-blocks/postgres` has
 * `PostgresEndpointStore`; both pass `runEndpointStoreConformance` of `/testing`.
 *
 * @module
 */

/**
 * Whether deliveries go to an endpoint. A disabled endpoint keeps its record and its
 * deliveries (they end `failed` and can be replayed once it is enabled again).
 *
 * @example
 * ```ts
 * const status: EndpointStatus = 'enabled'
 * ```
 */
export type EndpointStatus = 'enabled' | 'disabled'

/**
 * One signing secret of an endpoint. Deliveries are signed with every secret whose
 * `expiresAt` is `null` or still ahead, so during a rotation's overlap window receivers
 * holding either the old or the new secret verify them.
 *
 * @example
 * ```ts
 * const secret: EndpointSecret = { value: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', createdAt: 0, expiresAt: null }
 * ```
 */
export interface EndpointSecret {
  /**
   * The secret as the store keeps it: `whsec_` plus base64 of 32 random bytes, or, when the
   * registry has an encryption key, that string sealed (AES-256-GCM) so a database dump alone
   * does not sign. Stores treat it as opaque text.
   */
  value: string
  /** Milliseconds since the epoch. */
  createdAt: number
  /** When it stops signing, in milliseconds since the epoch; `null` for the current secret. */
  expiresAt: number | null
}

/**
 * A receiver endpoint.
 *
 * @example
 * ```ts
 * const endpoint: WebhookEndpoint = {
 *   id: 'we_01JD5Z0C9Q3N4W8K2M7T6R5P4B',
 *   url: 'https://hooks.example.com/orders',
 *   events: ['order.created'],
 *   status: 'enabled',
 *   disabledReason: null,
 *   secrets: [],
 *   owner: 'client:demo-backend',
 *   createdAt: 0,
 *   updatedAt: 0,
 *   version: 1,
 * }
 * ```
 */
export interface WebhookEndpoint {
  /** Unique; made by the registry. `[A-Za-z0-9_-]`, 1 to 64 characters. */
  id: string
  /** Absolute `http:` or `https:` URL, at most 2,048 characters, checked by the SSRF guard at registration. */
  url: string
  /** The event types it receives; `null` for every type. */
  events: readonly string[] | null
  status: EndpointStatus
  /** Why it is disabled (`'gone'` after a 410, `'manual'`, or the host's own words); `null` when enabled. */
  disabledReason: string | null
  /** Newest first; at most 4 (a rotation drops expired ones). */
  secrets: readonly EndpointSecret[]
  /** Who manages it (for example a principal key); `null` when unowned. The registry scopes reads and writes by it. */
  owner: string | null
  /** Milliseconds since the epoch. */
  createdAt: number
  /** Milliseconds since the epoch. */
  updatedAt: number
  /** 1 on insert, plus one on every update: the compare-and-set token of {@link EndpointStore.update}. */
  version: number
}

/**
 * The members an update sets; the others keep their value. `updatedAt` is always set.
 *
 * @example
 * ```ts
 * const change: EndpointUpdate = { status: 'disabled', disabledReason: 'gone', updatedAt: Date.now() }
 * ```
 */
export interface EndpointUpdate {
  url?: string
  events?: readonly string[] | null
  status?: EndpointStatus
  disabledReason?: string | null
  secrets?: readonly EndpointSecret[]
  updatedAt: number
}

/**
 * A page of endpoints: ids ascending, strictly after `after`, at most `limit`, only those of
 * `owner` when it is given (`null` matches unowned ones).
 *
 * @example
 * ```ts
 * const query: EndpointListQuery = { owner: 'client:demo-backend', limit: 20 }
 * ```
 */
export interface EndpointListQuery {
  owner?: string | null
  after?: string
  limit: number
}

/**
 * Where endpoints live. Every method returns a Promise (a store may be a database).
 *
 * @example
 * ```ts
 * async function disable(store: EndpointStore, id: string) {
 *   const current = await store.get(id)
 *   if (current) await store.update(id, { status: 'disabled', disabledReason: 'manual', updatedAt: Date.now() }, current.version)
 * }
 * ```
 */
export interface EndpointStore {
  /** Stores a new endpoint; rejects when the id is taken (the registry makes ids, so that is a bug). */
  insert(endpoint: WebhookEndpoint): Promise<void>
  get(id: string): Promise<WebhookEndpoint | undefined>
  /** See {@link EndpointListQuery}. */
  list(query: EndpointListQuery): Promise<WebhookEndpoint[]>
  /** Enabled endpoints whose `events` is `null` or holds `eventType`, ids ascending. */
  subscribed(eventType: string): Promise<WebhookEndpoint[]>
  /**
   * Applies `update` and adds one to `version`, atomically, if the endpoint exists and (when
   * `expectedVersion` is given) is still at that version. The updated endpoint, or `undefined`
   * when it is gone or changed meanwhile (nothing written).
   */
  update(
    id: string,
    update: EndpointUpdate,
    expectedVersion?: number,
  ): Promise<WebhookEndpoint | undefined>
  /** Deletes it; whether it existed. Its deliveries are not the store's concern. */
  delete(id: string): Promise<boolean>
}
