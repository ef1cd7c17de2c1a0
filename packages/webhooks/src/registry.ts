/**
 * The endpoint registry: the rules over an {@link EndpointStore}. It checks receiver URLs
 * (through the SSRF guard when one is given), validates the event-type selection, issues
 * signing secrets (shown once) and rotates them with an overlap window, optionally seals them
 * at rest (AES-256-GCM), scopes every read and write to an owner, and turns the store's
 * compare-and-set into retried read-modify-writes.
 *
 * @module
 */
import { decodeBase64url, encodeBase64, encodeBase64url } from '@api-blocks/core'
import type {
  EndpointSecret,
  EndpointStatus,
  EndpointStore,
  EndpointUpdate,
  WebhookEndpoint,
} from './endpoint-store.ts'
import { WebhookError } from './error.ts'
import type { SsrfGuard } from './ssrf/guard.ts'

/**
 * Options of {@link createEndpointRegistry}.
 *
 * @example
 * ```ts
 * const options: EndpointRegistryOptions = {
 *   store: new MemoryEndpointStore(),
 *   eventTypes: ['order.created', 'order.updated'],
 *   rotationOverlapMs: 86_400_000,
 * }
 * ```
 */
export interface EndpointRegistryOptions {
  store: EndpointStore
  /**
   * Checks each URL at registration (give the SSRF guard: `createSsrfGuard()`). Without one
   * only the syntax is checked (absolute `http:`/`https:`, no credentials, no fragment, at most
   * 2,048 characters): fine for tests, not for URLs your users type.
   */
  guard?: Pick<SsrfGuard, 'checkUrl'>
  /**
   * The event types an endpoint may select; absent: any well-formed `<object>.<action>` type.
   */
  eventTypes?: readonly string[]
  /**
   * 32 bytes: seals every secret at rest with AES-256-GCM (Web Crypto), the endpoint id as
   * additional data, so a copy of the store alone does not sign, and a sealed secret moved to
   * another endpoint does not open. Secrets cannot be hashed like passwords: the sender needs
   * the secret itself as the HMAC key at every delivery. Secrets stored before a key was set
   * are still read (unsealed); a sealed secret without the key (or with another) makes
   * {@link EndpointRegistry.signingSecrets} throw.
   */
  encryptionKey?: Uint8Array
  /** How long the previous secret keeps signing after a rotation, in milliseconds (default 24 h). */
  rotationOverlapMs?: number
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number
  /**
   * Fills the array with random bytes (default `crypto.getRandomValues`): ids, secrets and
   * AES-GCM nonces. It must be cryptographically secure outside tests.
   */
  random?: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array
}

/**
 * What {@link EndpointRegistry.create} takes.
 *
 * @example
 * ```ts
 * const input: NewEndpoint = { url: 'https://hooks.example.com/orders', events: ['order.created'], owner: 'client:demo' }
 * ```
 */
export interface NewEndpoint {
  /** Absolute `http:` or `https:` URL, at most 2,048 characters. */
  url: string
  /** The event types to receive (1 to 100, duplicates dropped); absent or `null`: every type. */
  events?: readonly string[] | null | undefined
  /** Who manages it; reads and writes naming another owner do not find it. */
  owner?: string | null | undefined
}

/**
 * An endpoint and its new signing secret: the only time the secret is shown.
 *
 * @example
 * ```ts
 * function answer({ endpoint, secret }: EndpointWithSecret) {
 *   return { id: endpoint.id, url: endpoint.url, events: endpoint.events, status: endpoint.status, secret }
 * }
 * ```
 */
export interface EndpointWithSecret {
  /** As stored: `secrets[].value` is the stored (maybe sealed) form, never to be shown. */
  endpoint: WebhookEndpoint
  /** `whsec_` plus base64 of 32 random bytes. */
  secret: string
}

/**
 * An endpoint as {@link EndpointRegistry.get} and `list` show it: every member of the stored
 * {@link WebhookEndpoint} but the secrets' values, so a read that ends in a log or a response
 * cannot leak one (even sealed). Each secret is only when it was made and until when it signs.
 *
 * @example
 * ```ts
 * function rotatedRecently(endpoint: EndpointView, now: number) {
 *   return endpoint.secrets.some((secret) => secret.expiresAt !== null && secret.expiresAt > now)
 * }
 * ```
 */
export type EndpointView = Omit<WebhookEndpoint, 'secrets'> & {
  /** Newest first, as stored, without `value`. */
  secrets: readonly { createdAt: number; expiresAt: number | null }[]
}

/** The stored endpoint without its secrets' values. */
function viewOf(endpoint: WebhookEndpoint): EndpointView {
  return {
    ...endpoint,
    secrets: endpoint.secrets.map(({ createdAt, expiresAt }) => ({ createdAt, expiresAt })),
  }
}

/**
 * The registry. `owner` arguments scope the call: when given (a string, or `null` for
 * unowned), an endpoint of another owner is `ENDPOINT_NOT_FOUND`, exactly as a missing one;
 * when absent, any endpoint is reachable (an operator's view).
 *
 * @example
 * ```ts
 * async function retire(registry: EndpointRegistry, id: string, owner: string) {
 *   await registry.setStatus(id, 'disabled', 'manual', owner)
 * }
 * ```
 */
export interface EndpointRegistry {
  /**
   * Checks the URL and the selection, makes the endpoint (`we_` id, enabled) and its first
   * secret. {@link WebhookError}: `URL_INVALID`, `URL_REFUSED`, `URL_UNRESOLVABLE`,
   * `EVENTS_INVALID`.
   */
  create(input: NewEndpoint): Promise<EndpointWithSecret>
  /** The endpoint without its secrets' values, or {@link WebhookError} `ENDPOINT_NOT_FOUND`. */
  get(id: string, owner?: string | null): Promise<EndpointView>
  /** A page of endpoints without their secrets' values, ids ascending (`limit` 1 to 1,000). */
  list(query: { owner?: string | null; after?: string; limit: number }): Promise<EndpointView[]>
  /** Deletes the endpoint (its deliveries then settle `failed`, `'endpoint-deleted'`). */
  delete(id: string, owner?: string | null): Promise<void>
  /**
   * Issues a new secret. The secrets that were signing keep signing until `overlapMs` (default
   * the registry's `rotationOverlapMs`) from now at the latest, so receivers can switch without
   * losing a delivery; expired ones are dropped, and at most 4 are kept (the oldest go first).
   * `overlapMs: 0` ends every earlier secret at once (a leaked secret).
   */
  rotateSecret(
    id: string,
    owner?: string | null,
    options?: { overlapMs?: number },
  ): Promise<EndpointWithSecret>
  /** Enables or disables the endpoint; `reason` (at most 200 characters) is kept while disabled. */
  setStatus(
    id: string,
    status: EndpointStatus,
    reason: string | null,
    owner?: string | null,
  ): Promise<WebhookEndpoint>
  /** The secrets that sign a delivery made at `now`, newest first, unsealed. */
  signingSecrets(endpoint: WebhookEndpoint, now: number): Promise<string[]>
  /** The store underneath (the worker reads endpoints from it directly). */
  readonly store: EndpointStore
}

const MAX_URL_LENGTH = 2048
const MAX_EVENTS = 100
const MAX_SECRETS = 4
const MAX_OWNER_LENGTH = 256
const MAX_REASON_LENGTH = 200
const MAX_OVERLAP_MS = 30 * 86_400_000
/** Compare-and-set attempts of one write before `ENDPOINT_CONFLICT`. */
const CAS_ATTEMPTS = 8
/** `<object>.<action>`, as the event envelope's `type` (event.ts). */
const EVENT_TYPE = /^[a-z][a-z0-9_]{0,63}\.[a-z][a-z0-9_]{0,63}$/
/** What a sealed secret starts with; `whsec_` secrets never do. */
const SEALED = 'whenc_v1.'

const utf8 = new TextEncoder()
const text = new TextDecoder('utf-8', { fatal: true })

/**
 * Checks a receiver URL's syntax (what the registry does without a guard): absolute `http:` or
 * `https:`, no credentials, no fragment, at most 2,048 characters.
 */
function checkUrlSyntax(input: string): URL {
  if (typeof input !== 'string' || input.length > MAX_URL_LENGTH) {
    throw new WebhookError(
      'URL_INVALID',
      `the URL must be a string of at most ${MAX_URL_LENGTH} characters`,
    )
  }
  const url = URL.parse(input)
  if (url === null) throw new WebhookError('URL_INVALID', 'the URL is not an absolute URL')
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new WebhookError('URL_INVALID', 'the URL must be http: or https:')
  }
  if (url.username !== '' || url.password !== '') {
    throw new WebhookError('URL_INVALID', 'the URL must not carry credentials')
  }
  if (url.hash !== '' || input.includes('#')) {
    throw new WebhookError('URL_INVALID', 'the URL must not have a fragment')
  }
  if (url.href.length > MAX_URL_LENGTH) {
    throw new WebhookError('URL_INVALID', `the URL must be at most ${MAX_URL_LENGTH} characters`)
  }
  return url
}

function checkOwner(owner: string | null | undefined): void {
  if (owner === undefined || owner === null) return
  if (typeof owner !== 'string' || owner.length === 0 || owner.length > MAX_OWNER_LENGTH) {
    throw new TypeError(`an endpoint owner is a string of 1 to ${MAX_OWNER_LENGTH} characters`)
  }
}

function checkOverlap(overlapMs: number): number {
  if (!Number.isSafeInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_OVERLAP_MS) {
    throw new RangeError(
      `a rotation overlap is an integer number of milliseconds in [0, ${MAX_OVERLAP_MS}]`,
    )
  }
  return overlapMs
}

/**
 * Makes the endpoint registry over a store.
 *
 * @example
 * ```ts
 * import { createEndpointRegistry, createSsrfGuard, MemoryEndpointStore } from '@api-blocks/webhooks'
 *
 * const registry = createEndpointRegistry({ store: new MemoryEndpointStore(), guard: createSsrfGuard() })
 * const { endpoint, secret } = await registry.create({ url: 'https://hooks.example.com/orders', events: ['order.created'] })
 * console.log(endpoint.id, secret) // we_…, whsec_… (show the secret once)
 * ```
 */
export function createEndpointRegistry(options: EndpointRegistryOptions): EndpointRegistry {
  const { store, guard, eventTypes } = options
  const clock = options.clock ?? Date.now
  const random = options.random ?? ((bytes) => crypto.getRandomValues(bytes))
  const rotationOverlapMs = checkOverlap(options.rotationOverlapMs ?? 86_400_000)
  const known = eventTypes === undefined ? undefined : new Set(eventTypes)
  let aesKey: Promise<CryptoKey> | undefined
  if (options.encryptionKey !== undefined) {
    if (!(options.encryptionKey instanceof Uint8Array) || options.encryptionKey.byteLength !== 32) {
      throw new TypeError('createEndpointRegistry(): encryptionKey must be 32 bytes (AES-256)')
    }
    const raw = new Uint8Array(options.encryptionKey)
    aesKey = crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt'])
    aesKey.catch(() => {}) // surfaced at first use
  }

  function randomBytes(length: number): Uint8Array<ArrayBuffer> {
    const bytes = new Uint8Array(random(new Uint8Array(length)))
    if (bytes.byteLength !== length) throw new TypeError('random() must fill the array it is given')
    return bytes
  }

  function checkEvents(events: readonly string[] | null | undefined): readonly string[] | null {
    if (events === undefined || events === null) return null
    if (!Array.isArray(events) || events.length === 0 || events.length > MAX_EVENTS) {
      throw new WebhookError(
        'EVENTS_INVALID',
        `events must be a list of 1 to ${MAX_EVENTS} event types, or absent for all`,
      )
    }
    const selected: string[] = []
    for (const type of events) {
      if (typeof type !== 'string' || !EVENT_TYPE.test(type)) {
        throw new WebhookError(
          'EVENTS_INVALID',
          'each event type is of the form <object>.<action>, lowercase',
        )
      }
      if (known !== undefined && !known.has(type)) {
        throw new WebhookError('EVENTS_INVALID', `unknown event type: ${type}`)
      }
      if (!selected.includes(type)) selected.push(type)
    }
    return Object.freeze(selected)
  }

  async function seal(secret: string, endpointId: string): Promise<string> {
    if (aesKey === undefined) return secret
    const iv = randomBytes(12)
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: utf8.encode(endpointId) },
      await aesKey,
      utf8.encode(secret),
    )
    const out = new Uint8Array(12 + sealed.byteLength)
    out.set(iv)
    out.set(new Uint8Array(sealed), 12)
    return SEALED + encodeBase64url(out)
  }

  async function unseal(value: string, endpointId: string): Promise<string> {
    if (!value.startsWith(SEALED)) return value
    if (aesKey === undefined) {
      throw new Error(
        `endpoint ${endpointId}: its secrets are sealed and the registry has no encryptionKey`,
      )
    }
    const bytes = decodeBase64url(value.slice(SEALED.length))
    if (bytes === undefined || bytes.byteLength < 12 + 16) {
      throw new Error(`endpoint ${endpointId}: a sealed secret is malformed`)
    }
    try {
      const opened = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: bytes.slice(0, 12), additionalData: utf8.encode(endpointId) },
        await aesKey,
        bytes.slice(12),
      )
      return text.decode(opened)
    } catch (cause) {
      throw new Error(
        `endpoint ${endpointId}: a sealed secret does not open with this encryptionKey`,
        { cause },
      )
    }
  }

  async function newSecret(
    endpointId: string,
    now: number,
  ): Promise<{ secret: string; stored: EndpointSecret }> {
    const secret = `whsec_${encodeBase64(randomBytes(32))}`
    return {
      secret,
      stored: { value: await seal(secret, endpointId), createdAt: now, expiresAt: null },
    }
  }

  async function load(id: string, owner: string | null | undefined): Promise<WebhookEndpoint> {
    checkOwner(owner)
    const endpoint = typeof id === 'string' && id.length <= 64 ? await store.get(id) : undefined
    if (endpoint === undefined || (owner !== undefined && endpoint.owner !== owner)) {
      throw new WebhookError('ENDPOINT_NOT_FOUND', 'no such webhook endpoint')
    }
    return endpoint
  }

  /** Read, change, compare-and-set; again from the read when another write came between. */
  async function modify(
    id: string,
    owner: string | null | undefined,
    change: (current: WebhookEndpoint, now: number) => EndpointUpdate,
  ): Promise<WebhookEndpoint> {
    for (let round = 0; round < CAS_ATTEMPTS; round++) {
      const current = await load(id, owner)
      const updated = await store.update(id, change(current, clock()), current.version)
      if (updated !== undefined) return updated
    }
    throw new WebhookError('ENDPOINT_CONFLICT', 'the endpoint kept changing; try again')
  }

  return {
    store,

    async create(input) {
      checkOwner(input.owner)
      const url =
        guard === undefined
          ? checkUrlSyntax(input.url)
          : await guard.checkUrl(checkUrlSyntax(input.url))
      const events = checkEvents(input.events)
      const id = `we_${encodeBase64url(randomBytes(16))}`
      const now = clock()
      const { secret, stored } = await newSecret(id, now)
      const endpoint: WebhookEndpoint = {
        id,
        url: url.href,
        events,
        status: 'enabled',
        disabledReason: null,
        secrets: [stored],
        owner: input.owner ?? null,
        createdAt: now,
        updatedAt: now,
        version: 1,
      }
      await store.insert(endpoint)
      return { endpoint, secret }
    },

    async get(id, owner) {
      return viewOf(await load(id, owner))
    },

    async list(query) {
      checkOwner(query.owner)
      if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > 1000) {
        throw new RangeError('list(): limit is an integer in [1, 1000]')
      }
      return (await store.list(query)).map(viewOf)
    },

    async delete(id, owner) {
      await load(id, owner)
      if (!(await store.delete(id)))
        throw new WebhookError('ENDPOINT_NOT_FOUND', 'no such webhook endpoint')
    },

    async rotateSecret(id, owner, rotation = {}) {
      const overlapMs = checkOverlap(rotation.overlapMs ?? rotationOverlapMs)
      await load(id, owner)
      const { secret, stored } = await newSecret(id, clock())
      const endpoint = await modify(id, owner, (current, now) => {
        const kept = current.secrets
          .map((old) => ({
            ...old,
            expiresAt: Math.min(old.expiresAt ?? Number.POSITIVE_INFINITY, now + overlapMs),
          }))
          .filter((old) => old.expiresAt > now)
        return {
          secrets: [{ ...stored, createdAt: now }, ...kept].slice(0, MAX_SECRETS),
          updatedAt: now,
        }
      })
      return { endpoint, secret }
    },

    async setStatus(id, status, reason, owner) {
      if (status !== 'enabled' && status !== 'disabled') {
        throw new TypeError("setStatus(): status is 'enabled' or 'disabled'")
      }
      if (reason !== null && (typeof reason !== 'string' || reason.length > MAX_REASON_LENGTH)) {
        throw new TypeError(
          `setStatus(): reason is null or a string of at most ${MAX_REASON_LENGTH} characters`,
        )
      }
      return await modify(id, owner, (_, now) => ({
        status,
        disabledReason: status === 'enabled' ? null : (reason ?? 'manual'),
        updatedAt: now,
      }))
    },

    async signingSecrets(endpoint, now) {
      const live = endpoint.secrets.filter(
        (secret) => secret.expiresAt === null || secret.expiresAt > now,
      )
      return await Promise.all(live.map((secret) => unseal(secret.value, endpoint.id)))
    },
  }
}
