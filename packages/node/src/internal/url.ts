/**
 * The absolute URL of an incoming request, built from the request target and the Host
 * header (RFC 9112 §3.3), with a fast path that skips the URL parser when the result would
 * not change.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'
import { NodeAdapterError } from '../errors.ts'

/** Where the scheme and authority come from. */
export interface UrlSource {
  /** Honour X-Forwarded-Proto and X-Forwarded-Host. */
  trustProxy?: boolean | undefined
  /** The scheme as the framework resolved it (Express `req.protocol`). Wins over the socket. */
  protocol?: string | undefined
  /** The authority as the framework resolved it (Express `req.host`). Wins over Host. */
  host?: string | undefined
  /** The request target to use instead of `req.url` (Express `req.originalUrl`). */
  target?: string | undefined
}

// A target the WHATWG URL parser keeps byte for byte: no dot segments, no characters of the
// path or query percent-encode sets, no backslash. Everything else goes through `new URL`.
const PLAIN_TARGET = /^\/[\w\-.~!$&()*+,;=:@/%?]*$/
const DOT = /\/\.|%2e/i
// A lower-case name of non-empty labels with an optional port without leading zeros.
const PLAIN_HOST = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*(?::[1-9]\d{0,4})?$/
// WHATWG URL parses a host whose last label is numeric as IPv4 ("10.1" is 10.0.0.1) …
const NUMERIC_LABEL = /(?:^|\.)(?:\d+|0x[0-9a-f]*)(?::\d+)?$/
// … which keeps its text only in the canonical dotted-quad form.
const DOTTED_QUAD =
  /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?::\d+)?$/
// Characters that would move the boundary between authority and path if parsed.
const HOST_BREAKERS = /[/?#@\\\s]/

/**
 * The absolute URL of `req`. Throws {@link NodeAdapterError} (`INVALID_HOST`,
 * `INVALID_TARGET`) for what cannot be a URL; the listener answers those with 400.
 */
export function requestUrl(req: IncomingMessage, source: UrlSource): string {
  const target = source.target ?? req.url ?? '/'
  if (target.charCodeAt(0) !== 47 /* / */) return absoluteTarget(target)
  const scheme = schemeOf(req, source)
  const host = hostOf(req, source, scheme)
  if (PLAIN_TARGET.test(target) && !DOT.test(target)) return `${scheme}://${host}${target}`
  // Concatenate, never resolve: a target `//evil.example/x` is a path here, not an authority.
  return new URL(`${scheme}://${host}${target}`).href
}

// RFC 9112 §3.2.2: absolute-form (sent to proxies); the target's authority replaces Host.
function absoluteTarget(target: string): string {
  if (target.startsWith('http://') || target.startsWith('https://')) {
    try {
      return new URL(target).href
    } catch {
      // fall through to the error below
    }
  }
  // asterisk-form (OPTIONS *) and authority-form (CONNECT) have no Fetch equivalent.
  throw new NodeAdapterError('INVALID_TARGET', 'The request target is not a URL path.')
}

function schemeOf(req: IncomingMessage, source: UrlSource): string {
  if (source.protocol !== undefined)
    return source.protocol.toLowerCase() === 'https' ? 'https' : 'http'
  if (source.trustProxy) {
    const forwarded = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase()
    if (forwarded === 'https' || forwarded === 'http') return forwarded
  }
  return (req.socket as TLSSocket | undefined)?.encrypted ? 'https' : 'http'
}

let lastHost = { raw: '', scheme: '', host: '' }

// The first Host line, read from rawHeaders: `req.headers` would build an object of every
// header just for this one.
function hostHeader(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 4 && (name === 'Host' || name.toLowerCase() === 'host')) return raw[i + 1]
  }
  return undefined
}

function hostOf(req: IncomingMessage, source: UrlSource, scheme: string): string {
  let raw = source.host
  if (raw === undefined && source.trustProxy) raw = firstValue(req.headers['x-forwarded-host'])
  // RFC 9112 §3.2: node:http already answers 400 to an HTTP/1.1 request without Host; an
  // HTTP/1.0 one may omit it, and then the local address stands in.
  raw ??= hostHeader(req) ?? localAuthority(req)
  // Clients send the same Host on every request: remember the last verdict.
  if (raw === lastHost.raw && scheme === lastHost.scheme) return lastHost.host
  const host = raw.toLowerCase()
  if (isPlainHost(host, scheme)) {
    lastHost = { raw, scheme, host }
    return host
  }
  if (host === '' || HOST_BREAKERS.test(host)) throw invalidHost()
  try {
    // The parser validates IPv6 literals and ports, drops a default port and encodes IDNs.
    return new URL(`${scheme}://${host}`).host
  } catch (cause) {
    throw invalidHost(cause)
  }
}

// Whether the URL parser would keep `host` exactly as it is (so it can be skipped).
function isPlainHost(host: string, scheme: string): boolean {
  if (!PLAIN_HOST.test(host) || host.includes('xn--')) return false
  if (NUMERIC_LABEL.test(host) && !DOTTED_QUAD.test(host)) return false
  const colon = host.lastIndexOf(':')
  if (colon === -1) return true
  const port = host.slice(colon + 1)
  return Number(port) <= 65535 && port !== (scheme === 'http' ? '80' : '443')
}

function localAuthority(req: IncomingMessage): string {
  const { localAddress, localPort } = req.socket
  if (localAddress === undefined) return 'localhost'
  return localAddress.includes(':')
    ? `[${localAddress}]:${localPort}`
    : `${localAddress}:${localPort}`
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined) return undefined
  const comma = value.indexOf(',')
  return (comma === -1 ? value : value.slice(0, comma)).trim() || undefined
}

function invalidHost(cause?: unknown): NodeAdapterError {
  return new NodeAdapterError('INVALID_HOST', 'The Host header is not a valid authority.', {
    cause,
  })
}
