/**
 * The URLs a verifier fetches from (a JWKS, an introspection endpoint): `https:`, or `http:`
 * on a loopback host (a test, a sidecar), or `http:` anywhere when the configuration says so.
 *
 * @module
 */

// RFC 6890 §2.2.2 (127.0.0.0/8) and RFC 4291 §2.5.3 (::1); RFC 6761 §6.3 (localhost). The URL
// parser has already normalised IPv4 hosts (`127.1` is `127.0.0.1`) and bracketed IPv6 ones.
function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  )
}

/**
 * @internal `value` as a URL a verifier may fetch from; throws a TypeError for another scheme,
 * or for `http:` on a host that is not a loopback one unless `allowInsecureHttp`.
 */
export function checkFetchUrl(
  value: string | URL,
  name: string,
  allowInsecureHttp: boolean | undefined,
): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch (cause) {
    throw new TypeError(`${name} is not a URL`, { cause })
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`${name} must be an http(s) URL, got ${url.protocol}`)
  }
  if (url.protocol === 'http:' && allowInsecureHttp !== true && !isLoopback(url.hostname)) {
    throw new TypeError(
      `${name} must be an https: URL (http: only on a loopback host, or with allowInsecureHttp: true)`,
    )
  }
  return url
}
