/**
 * One RFC 7662 introspection request over HTTP: `POST` of the token as a form, the resource
 * server authenticated with `client_secret_basic`, and only a well-formed answer accepted
 * (status 200, a JSON object of at most {@link MAX_INTROSPECTION_BYTES}, a boolean `active`).
 * Anything else is the authorisation server's failure: `INTROSPECTION_UNAVAILABLE`.
 *
 * @module
 */
import { encodeBase64, readStream } from '@api-blocks/core'
import { BearerError } from '../error.ts'
import type { BearerFetch, IntrospectionResponse } from '../options.ts'

/** @internal The largest introspection answer read, in bytes. */
export const MAX_INTROSPECTION_BYTES: number = 64 * 1024

/** @internal What one request needs, resolved from the options. */
export interface IntrospectionEndpoint {
  readonly url: string
  /** The Authorization field, computed once. */
  readonly authorization: string
  readonly timeoutMs: number
  readonly fetch: BearerFetch | undefined
}

// RFC 6749 §2.3.1: the client id and secret are form-url-encoded (Appendix B) before Basic.
function formEncode(value: string): string {
  return new URLSearchParams([['', value]]).toString().slice(1)
}

/** @internal The Basic credentials of RFC 6749 §2.3.1 for `clientId` and `clientSecret`. */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  const pair = `${formEncode(clientId)}:${formEncode(clientSecret)}`
  return `Basic ${encodeBase64(new TextEncoder().encode(pair))}`
}

function unavailable(message: string, cause?: unknown): BearerError {
  return new BearerError('INTROSPECTION_UNAVAILABLE', message, { cause })
}

/** @internal Asks the endpoint about `token`. Throws `INTROSPECTION_UNAVAILABLE` on any failure. */
export async function requestIntrospection(
  endpoint: IntrospectionEndpoint,
  token: string,
): Promise<IntrospectionResponse> {
  const signal = AbortSignal.timeout(endpoint.timeoutMs)
  const headers = new Headers({
    authorization: endpoint.authorization,
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  })
  // RFC 7662 §2.1: token, and the hint that it is an access token.
  const body = new URLSearchParams({ token, token_type_hint: 'access_token' }).toString()
  let response: Response
  try {
    const fetchImpl = endpoint.fetch ?? (globalThis.fetch as BearerFetch)
    // Never follow a redirect with the client's credentials.
    response = await fetchImpl(endpoint.url, {
      method: 'POST',
      headers,
      body,
      signal,
      redirect: 'manual',
    })
  } catch (cause) {
    throw unavailable(
      signal.aborted
        ? 'The introspection endpoint did not answer in time.'
        : 'The introspection endpoint could not be reached.',
      cause,
    )
  }
  if (response.status !== 200 || response.body === null) {
    await response.body?.cancel().catch(() => undefined)
    throw unavailable(`The introspection endpoint answered ${response.status}.`)
  }
  const type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/json') {
    await response.body.cancel().catch(() => undefined)
    throw unavailable('The introspection endpoint did not answer JSON.')
  }
  let answer: unknown
  try {
    const bytes = await readStream(response.body, MAX_INTROSPECTION_BYTES)
    answer = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (cause) {
    throw unavailable(
      signal.aborted
        ? 'The introspection endpoint did not answer in time.'
        : 'The introspection answer is too large or not JSON.',
      cause,
    )
  }
  return checkIntrospectionResponse(answer)
}

const OPTIONAL_STRINGS = ['scope', 'client_id', 'sub', 'username', 'iss', 'jti', 'token_type']
const OPTIONAL_NUMBERS = ['exp', 'iat', 'nbf']

/**
 * @internal `answer` as an introspection response, its members of RFC 7662 §2.2 typed;
 * throws `INTROSPECTION_UNAVAILABLE` for anything else.
 */
export function checkIntrospectionResponse(answer: unknown): IntrospectionResponse {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    throw unavailable('The introspection answer is not a JSON object.')
  }
  const record = answer as Record<string, unknown>
  if (typeof record['active'] !== 'boolean') {
    throw unavailable('The introspection answer has no boolean active member.')
  }
  if (record['active'] === false) return record as IntrospectionResponse
  for (const name of OPTIONAL_STRINGS) {
    if (record[name] !== undefined && typeof record[name] !== 'string') {
      throw unavailable(`The introspection answer's ${name} is not a string.`)
    }
  }
  for (const name of OPTIONAL_NUMBERS) {
    if (record[name] !== undefined && !Number.isFinite(record[name])) {
      throw unavailable(`The introspection answer's ${name} is not a number.`)
    }
  }
  const aud = record['aud']
  if (
    aud !== undefined &&
    typeof aud !== 'string' &&
    !(Array.isArray(aud) && aud.every((item) => typeof item === 'string'))
  ) {
    throw unavailable("The introspection answer's aud is not a string or a list of strings.")
  }
  return record as IntrospectionResponse
}
