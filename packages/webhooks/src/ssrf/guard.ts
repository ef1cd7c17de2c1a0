/**
 * The SSRF guard (docs/spec.md §4.4): an undici dispatcher that refuses to connect to a
 * refused address, whatever the URL looked like, and a check of receiver URLs at registration.
 *
 * Names are only hints: the decision is taken on the address that is dialled. The connector
 * resolves names itself (a `lookup` that asks for every address, as Node's `autoSelectFamily`
 * does) and refuses the connection when any of them is refused, so a name that answered a
 * public address at registration and answers 127.0.0.1 now (DNS rebinding) is refused now.
 * IP literals never reach `lookup` (Node dials them directly), so the connector checks them
 * before dialling; and once connected it checks the socket's peer address as a last line.
 *
 * @module
 */
import type { LookupAddress, LookupAllOptions, LookupOptions } from 'node:dns'
import { lookup as dnsLookup } from 'node:dns'
import type { LookupFunction as NetLookupFunction } from 'node:net'
import { isIP } from 'node:net'
import type { Dispatcher } from 'undici'
import { Agent, buildConnector } from 'undici'
import { WebhookError } from '../error.ts'
import { inRanges, isRefusedAddress, parseCidr } from './address.ts'

/**
 * A `node:dns` `lookup`-compatible resolver, called with `{ all: true }`: every address of the
 * name. Inject one in tests (a name that resolves to loopback, a rebinding answer).
 *
 * @example
 * ```ts
 * const lookup: DnsLookup = (hostname, options, callback) => {
 *   callback(null, [{ address: '127.0.0.1', family: 4 }])
 * }
 * ```
 */
export type DnsLookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void

/**
 * Options of {@link createSsrfGuard}.
 *
 * @example
 * ```ts
 * const options: SsrfGuardOptions = { allowedOrigins: ['http://127.0.0.1:4000'], connectTimeoutMs: 5_000 }
 * ```
 */
export interface SsrfGuardOptions {
  /**
   * Exact origins (`http://127.0.0.1:4000`, `https://hooks.internal:8443`) allowed whatever
   * they resolve to: a local receiver in development and tests, an internal service. Only that
   * scheme, host and port; paths are not allowed here.
   */
  allowedOrigins?: readonly string[]
  /** CIDR ranges allowed although refused by default (`10.20.0.0/16`, `fd12:3456::/32`). */
  allowedRanges?: readonly string[]
  /** The resolver (default `node:dns` `lookup`). */
  lookup?: DnsLookup
  /** How long resolving a name and connecting may take, in milliseconds (default 10,000). */
  connectTimeoutMs?: number
}

/**
 * What {@link createSsrfGuard} makes.
 *
 * @example
 * ```ts
 * const url = await guard.checkUrl('https://hooks.example.com/orders') // or a WebhookError
 * await request(url, { dispatcher: guard.dispatcher, method: 'POST', body: '{}' })
 * ```
 */
export interface SsrfGuard {
  /**
   * Checks a receiver URL at registration: an absolute `http:` or `https:` URL of at most
   * 2,048 characters without credentials or fragment (else `URL_INVALID`), whose host is, or
   * resolves only to, allowed addresses (else `URL_REFUSED`, or `URL_UNRESOLVABLE` when it
   * does not resolve). Resolves with the parsed URL. The dispatcher checks again at connect
   * time: names can change what they resolve to.
   */
  checkUrl(url: string | URL): Promise<URL>
  /** An undici Agent whose every connection is checked; pass it as `dispatcher`. */
  readonly dispatcher: Dispatcher
  /** Closes the dispatcher's connections. */
  close(): Promise<void>
}

/** RFC 9110 §4.1: no limit is set, but 2,048 is what endpoints are stored with. */
const MAX_URL_LENGTH = 2048

/**
 * RFC 6761 §6.3: `localhost` and names under it are loopback by definition; refused by name
 * even when a resolver would answer something else for them.
 */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname
  return name === 'localhost' || name.endsWith('.localhost')
}

/** The host of a URL or a connector call without the brackets of an IPv6 literal. */
function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

function originKey(protocol: string, hostname: string, port: string | number): string {
  const host = bareHost(hostname).toLowerCase()
  const defaultPort = protocol === 'https:' ? '443' : '80'
  const portText = String(port) === '' ? defaultPort : String(port)
  return `${protocol}//${host}:${portText}`
}

function parseOrigin(origin: string): string {
  const url = URL.canParse(origin) ? new URL(origin) : undefined
  if (
    url === undefined ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.pathname !== '/' ||
    url.search !== '' ||
    origin.includes('#') ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new TypeError(`allowedOrigins: ${origin} is not an origin like http://127.0.0.1:4000`)
  }
  return originKey(url.protocol, url.hostname, url.port)
}

function refusal(hostname: string, address: string): WebhookError {
  const what = hostname === address ? address : `${hostname} (${address})`
  return new WebhookError('URL_REFUSED', `The SSRF guard refuses to connect to ${what}`)
}

/**
 * Whether `error`, or an error in its `cause` chain (undici wraps connection errors), is the
 * guard refusing an address.
 */
export function isAddressRefusal(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 8; depth++) {
    if (cause instanceof WebhookError && cause.code === 'URL_REFUSED') return true
    cause = cause.cause
  }
  return false
}

/**
 * Checks a receiver URL's syntax (the rules of {@link SsrfGuard.checkUrl}); the parsed URL or a
 * {@link WebhookError} `URL_INVALID`.
 */
export function parseReceiverUrl(input: string | URL): URL {
  const text = typeof input === 'string' ? input : input.href
  if (text.length > MAX_URL_LENGTH || !URL.canParse(text)) {
    throw new WebhookError(
      'URL_INVALID',
      `The URL is not an absolute URL of at most ${MAX_URL_LENGTH} characters`,
    )
  }
  const url = new URL(text)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebhookError('URL_INVALID', 'The URL is not an http: or https: URL')
  }
  if (url.username !== '' || url.password !== '') {
    throw new WebhookError('URL_INVALID', 'The URL carries credentials')
  }
  // A fragment is never sent; one in a receiver URL is a mistake or a trick (`#@127.0.0.1`).
  if (url.hash !== '' || text.includes('#')) {
    throw new WebhookError('URL_INVALID', 'The URL carries a fragment')
  }
  if (url.href.length > MAX_URL_LENGTH) {
    throw new WebhookError('URL_INVALID', `The URL is over ${MAX_URL_LENGTH} characters`)
  }
  return url
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${name} is a positive whole number of milliseconds`)
  }
  return value
}

/**
 * Makes an SSRF guard: `checkUrl` for registration and an undici `dispatcher` that checks every
 * connection (see the module's notes). Refused: every address {@link isRefusedAddress} refuses
 * and the names `localhost` and `*.localhost`, unless the origin is in `allowedOrigins` or the
 * address in `allowedRanges`. A refused connection fails with a {@link WebhookError}
 * `URL_REFUSED` (the sender reports it as the failure `'address-refused'`).
 *
 * @example
 * ```ts
 * import { request } from 'undici'
 * const guard = createSsrfGuard({ allowedOrigins: ['http://127.0.0.1:4000'] })
 * await guard.checkUrl('http://169.254.169.254/latest/meta-data') // rejects: URL_REFUSED
 * const { statusCode } = await request('http://127.0.0.1:4000/hook', { dispatcher: guard.dispatcher })
 * ```
 */
export function createSsrfGuard(options: SsrfGuardOptions = {}): SsrfGuard {
  const origins = new Set((options.allowedOrigins ?? []).map(parseOrigin))
  const ranges = (options.allowedRanges ?? []).map((cidr) => {
    try {
      return parseCidr(cidr)
    } catch (cause) {
      throw new TypeError(`allowedRanges: ${cidr} is not a CIDR range`, { cause })
    }
  })
  const lookup: DnsLookup = options.lookup ?? dnsLookup
  const timeoutMs = positive(options.connectTimeoutMs ?? 10_000, 'connectTimeoutMs')

  const allows = (address: string) => !isRefusedAddress(address) || inRanges(address, ranges)

  function resolve(hostname: string, lookupOptions?: LookupOptions): Promise<LookupAddress[]> {
    return new Promise((done, fail) => {
      const timer = setTimeout(() => {
        const error: NodeJS.ErrnoException = new Error(`Resolving ${hostname} timed out`)
        error.code = 'ETIMEOUT'
        fail(error)
      }, timeoutMs)
      try {
        lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
          clearTimeout(timer)
          if (error) fail(error)
          else if (!Array.isArray(addresses) || addresses.length === 0) {
            const empty: NodeJS.ErrnoException = new Error(`${hostname} has no address`)
            empty.code = 'ENOTFOUND'
            fail(empty)
          } else done(addresses)
        })
      } catch (error) {
        clearTimeout(timer)
        fail(error)
      }
    })
  }

  // net.connect's `lookup` hook. It always asks for every address and, when `check` is on,
  // refuses the connection if any of them is refused, whatever net asked for.
  const connectLookup =
    (check: boolean): NetLookupFunction =>
    (hostname, lookupOptions, callback) => {
      resolve(hostname, lookupOptions).then(
        (addresses) => {
          const refused = check ? addresses.find(({ address }) => !allows(address)) : undefined
          if (refused !== undefined) return callback(refusal(hostname, refused.address), [])
          if (lookupOptions.all) return callback(null, addresses)
          const first = addresses[0]!
          callback(null, first.address, first.family)
        },
        (error: NodeJS.ErrnoException) => callback(error, []),
      )
    }

  const guarded = buildConnector({ timeout: timeoutMs, lookup: connectLookup(true) })
  // Allowed origins connect without the address checks, through the same resolver.
  const trusted = buildConnector({ timeout: timeoutMs, lookup: connectLookup(false) })

  const connect: buildConnector.connector = (connectOptions, callback) => {
    const { protocol, port } = connectOptions
    const hostname = bareHost(connectOptions.hostname)
    if (origins.has(originKey(protocol, hostname, port))) {
      return trusted(connectOptions, callback)
    }
    if (isIP(hostname) !== 0) {
      // Node dials an IP literal without calling `lookup`: check it here, before dialling.
      if (!allows(hostname)) return callback(refusal(hostname, hostname), null)
    } else if (isLocalhostName(hostname)) {
      return callback(refusal(hostname, 'loopback'), null)
    }
    return guarded(connectOptions, (error, socket) => {
      if (error !== null) return callback(error, null)
      // The last line: the peer the socket is connected to.
      const peer = socket.remoteAddress
      if (peer === undefined || !allows(peer)) {
        socket.destroy()
        return callback(refusal(hostname, peer ?? 'an unknown address'), null)
      }
      callback(null, socket)
    })
  }

  const dispatcher = new Agent({ connect })

  async function checkUrl(input: string | URL): Promise<URL> {
    const url = parseReceiverUrl(input)
    if (origins.has(originKey(url.protocol, url.hostname, url.port))) return url
    const hostname = bareHost(url.hostname)
    if (isIP(hostname) !== 0) {
      if (!allows(hostname)) throw refusal(hostname, hostname)
      return url
    }
    if (isLocalhostName(hostname)) throw refusal(hostname, 'loopback')
    let addresses: LookupAddress[]
    try {
      addresses = await resolve(hostname)
    } catch (cause) {
      throw new WebhookError('URL_UNRESOLVABLE', `The host ${hostname} does not resolve`, {
        cause,
      })
    }
    const refused = addresses.find(({ address }) => !allows(address))
    if (refused !== undefined) throw refusal(hostname, refused.address)
    return url
  }

  return {
    checkUrl,
    dispatcher,
    close: () => dispatcher.close(),
  }
}
