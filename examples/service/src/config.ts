// Configuration read from the environment at start: what several instances must agree on (the
// keys that sign cursors, the public URL) comes from here, never from per-process randomness or
// from requests. Anything invalid stops the start with a message naming the variable.
import { ApiBlocksError, decodeBase64url } from '@api-blocks/core'
import type { CursorKey } from '@api-blocks/pagination'
import { MIN_SECRET_BYTES } from '@api-blocks/pagination'

/** A setting the service cannot start with. */
export class ConfigError extends ApiBlocksError<'INVALID_CONFIG'> {
  static override readonly kind: string = 'example-service.ConfigError'

  constructor(message: string) {
    super('INVALID_CONFIG', message)
  }
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/
/** More keys than a rotation needs is a mistake (each is tried on every bad cursor). */
const MAX_CURSOR_KEYS = 8

/**
 * `CURSOR_SECRET`: the keys that sign list cursors, newest first, comma-separated, each
 * `<id>:<secret>`. The id (1 to 32 of `A-Z a-z 0-9 _ -`) travels in every cursor and names
 * the key that verifies it; the secret is at least 32 random bytes in unpadded base64url
 * (43 characters for 32 bytes). The first key signs; every key verifies. To rotate: put a new
 * key first on every instance, and remove the old one a cursor lifetime (24 hours) later.
 *
 * @example
 * ```ts
 * parseCursorKeys('2026-06:3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,2026-01:…')
 * // [{ id: '2026-06', secret: Uint8Array(32) }, { id: '2026-01', … }]
 * ```
 */
export function parseCursorKeys(text: string): CursorKey[] {
  const entries = text.split(',').map((entry) => entry.trim())
  if (entries.length > MAX_CURSOR_KEYS) {
    throw new ConfigError(`CURSOR_SECRET holds ${entries.length} keys; at most ${MAX_CURSOR_KEYS}.`)
  }
  const keys: CursorKey[] = []
  for (const [index, entry] of entries.entries()) {
    const where = `CURSOR_SECRET key ${index + 1}`
    const colon = entry.indexOf(':')
    if (colon < 0) {
      throw new ConfigError(
        `${where} must be <id>:<secret> (e.g. 2026-06:<43 base64url characters>).`,
      )
    }
    const id = entry.slice(0, colon)
    if (!KEY_ID.test(id)) {
      throw new ConfigError(
        `${where}: the id must be 1 to 32 of A-Z a-z 0-9 _ - (got "${id.slice(0, 40)}").`,
      )
    }
    if (keys.some((key) => key.id === id))
      throw new ConfigError(`${where}: the id "${id}" is used twice.`)
    const secret = decodeBase64url(entry.slice(colon + 1))
    if (secret === undefined) {
      throw new ConfigError(`${where} ("${id}"): the secret is not unpadded base64url.`)
    }
    if (secret.byteLength < MIN_SECRET_BYTES) {
      throw new ConfigError(
        `${where} ("${id}"): the secret is ${secret.byteLength} bytes; at least ${MIN_SECRET_BYTES} (43 base64url characters).`,
      )
    }
    keys.push({ id, secret })
  }
  return keys
}

/**
 * `PUBLIC_URL`: where clients reach the service, `http(s)://host[:port][/base path]`, without
 * credentials, query or fragment. Returned without a trailing slash, ready to put a path after.
 *
 * @example
 * ```ts
 * parsePublicUrl('https://api.example.com/') // 'https://api.example.com'
 * ```
 */
export function parsePublicUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new ConfigError(
      `PUBLIC_URL must be an absolute URL such as https://api.example.com (got "${text.slice(0, 100)}").`,
    )
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`PUBLIC_URL must be http or https (got ${url.protocol}).`)
  }
  if (
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== '' ||
    text.includes('#') ||
    text.includes('?')
  ) {
    throw new ConfigError('PUBLIC_URL must not carry credentials, a query or a fragment.')
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}
