/**
 * Reading the parameters of a request: the `application/x-www-form-urlencoded` body of the
 * token, introspection and revocation endpoints, and the query of `/authorize`.
 *
 * Strict on purpose: a parameter given twice is refused (RFC 6749 §3.1 and §3.2: "Request and
 * response parameters MUST NOT be included more than once"), a malformed percent escape is
 * refused rather than kept verbatim, and a parameter without a value counts as absent (RFC 6749
 * §3.1). The body is read within a byte limit, the query within a length limit.
 *
 * @module
 */
import { BodyReadError, readRequestBody } from '@api-blocks/core'
import { OAuthError } from './error.ts'

/**
 * The parameters, each at most once; a name given twice is in `duplicates`.
 *
 * @example
 * ```ts
 * const form: Parameters = parseUrlEncoded('a=1')! // values: a → '1'
 * ```
 */
export interface Parameters {
  readonly values: ReadonlyMap<string, string>
  readonly duplicates: ReadonlySet<string>
}

/**
 * The most parameters one request may carry; there are about a dozen in any real one.
 *
 * @example
 * ```ts
 * MAX_PARAMETERS // 64
 * ```
 */
export const MAX_PARAMETERS = 64

const decoder = new TextDecoder('utf-8', { fatal: true })

function decodeComponent(text: string): string | undefined {
  const plus = text.includes('+') ? text.replaceAll('+', ' ') : text
  if (!plus.includes('%')) return plus
  try {
    return decodeURIComponent(plus)
  } catch {
    return undefined
  }
}

/**
 * Parses `a=1&b=2` as the WHATWG urlencoded parser does (`+` is a space, `%XX` a byte of
 * UTF-8), except that a malformed escape or bad UTF-8 answers `undefined` instead of being kept,
 * and that repeated names are reported. An empty value is kept as absent (RFC 6749 §3.1), but
 * still counts towards the duplicates.
 *
 * @example
 * ```ts
 * parseUrlEncoded('grant_type=client_credentials&scope=read%3Aorders')
 * // { values: Map { grant_type → 'client_credentials', scope → 'read:orders' }, duplicates: Set {} }
 * ```
 */
export function parseUrlEncoded(text: string): Parameters | undefined {
  const values = new Map<string, string>()
  const seen = new Set<string>()
  const duplicates = new Set<string>()
  if (text === '') return { values, duplicates }
  const pairs = text.split('&')
  if (pairs.length > MAX_PARAMETERS) return undefined
  for (const pair of pairs) {
    if (pair === '') continue
    const equals = pair.indexOf('=')
    const name = decodeComponent(equals === -1 ? pair : pair.slice(0, equals))
    const value = equals === -1 ? '' : decodeComponent(pair.slice(equals + 1))
    if (name === undefined || value === undefined) return undefined
    if (seen.has(name)) duplicates.add(name)
    seen.add(name)
    if (value !== '') values.set(name, value)
  }
  for (const name of duplicates) values.delete(name)
  return { values, duplicates }
}

/**
 * Reads a POST form body as text within `maxBytes`, refusing another media type, a body over
 * the limit and bad UTF-8, each as an `invalid_request` OAuthError.
 *
 * @example
 * ```ts
 * const text = await readFormText(request, 16 * 1024) // 'grant_type=…'
 * ```
 */
export async function readFormText(request: Request, maxBytes: number): Promise<string> {
  const type = request.headers.get('content-type') ?? ''
  // RFC 6749 §3.2 / §4.1.3: the token endpoint takes application/x-www-form-urlencoded only.
  if (type.split(';', 1)[0]!.trim().toLowerCase() !== 'application/x-www-form-urlencoded') {
    await request.body?.cancel().catch(() => undefined)
    throw new OAuthError(
      'invalid_request',
      'The request body must be application/x-www-form-urlencoded.',
    )
  }
  let bytes: Uint8Array
  try {
    bytes = await readRequestBody(request, { maxBytes })
  } catch (error) {
    if (error instanceof BodyReadError && error.status < 500) {
      throw new OAuthError(
        'invalid_request',
        error.code === 'BODY_TOO_LARGE'
          ? `The request body is larger than ${maxBytes} bytes.`
          : 'The request body could not be read.',
        { cause: error },
      )
    }
    throw error
  }
  try {
    return decoder.decode(bytes)
  } catch {
    throw new OAuthError('invalid_request', 'The request body is not UTF-8.')
  }
}

/**
 * Reads a POST form within `maxBytes` ({@link readFormText}), refusing malformed encoding and
 * duplicated parameters as `invalid_request`.
 *
 * @example
 * ```ts
 * const form = await readForm(request, 16 * 1024)
 * form.values.get('grant_type')
 * ```
 */
export async function readForm(request: Request, maxBytes: number): Promise<Parameters> {
  const parameters = parseUrlEncoded(await readFormText(request, maxBytes))
  if (parameters === undefined) {
    throw new OAuthError('invalid_request', 'The request body is not a well-formed form.')
  }
  refuseDuplicates(parameters)
  return parameters
}

/** Throws `invalid_request` when a parameter was given more than once (RFC 6749 §3.1). */
function refuseDuplicates(parameters: Parameters): void {
  const [first] = parameters.duplicates
  if (first !== undefined) {
    throw new OAuthError(
      'invalid_request',
      `The parameter ${JSON.stringify(first.slice(0, 64))} is given more than once.`,
    )
  }
}

/**
 * One parameter, at most `maxLength` characters: `undefined` when absent; an `invalid_request`
 * OAuthError when longer.
 *
 * @example
 * ```ts
 * const state = parameter(query, 'state', LIMITS.state) // string | undefined
 * ```
 */
export function parameter(
  parameters: Parameters,
  name: string,
  maxLength: number,
): string | undefined {
  const value = parameters.values.get(name)
  if (value !== undefined && value.length > maxLength) {
    throw new OAuthError('invalid_request', `The ${name} parameter is longer than ${maxLength}.`)
  }
  return value
}
