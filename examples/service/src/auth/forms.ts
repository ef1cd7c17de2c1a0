// What every POST of the pages checks before it reads a field: that the browser sent it from
// this origin (Fetch Metadata and Origin, when present), that it is a small urlencoded form
// with no field given twice, and that it carries the session's CSRF token.
import { BodyReadError, readRequestBody } from '@api-blocks/core'

/** Why a form was refused, and the status to answer. */
export class FormError extends Error {
  readonly status: number
  /** Extra response headers (Retry-After of a 429 or 503). */
  readonly headers: Record<string, string>

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.status = status
    this.headers = headers
  }
}

/**
 * Refuses a cross-site POST: `Sec-Fetch-Site` (Fetch Metadata) other than `same-origin`, or an
 * `Origin` other than the service's. Both are absent from clients that are not browsers, which
 * the CSRF token covers; browsers send at least one of them on every POST.
 *
 * `Origin: null` is what a browser sends for a POST from a page whose referrer policy hides its
 * origin (no-referrer, or an https page posting to http; Fetch §3.2 "serializing a request
 * origin"), but also what a sandboxed frame or a data: URL sends. It passes only with
 * `Sec-Fetch-Site: same-origin`, which the browser computes itself and no page can set.
 */
export function checkSameOrigin(request: Request, publicOrigin: string): void {
  const site = request.headers.get('sec-fetch-site')
  if (site !== null && site !== 'same-origin') {
    throw new FormError(403, 'This form must be sent from this site.')
  }
  const origin = request.headers.get('origin')
  if (origin === 'null' && site === 'same-origin') return
  if (origin !== null && origin !== publicOrigin) {
    throw new FormError(403, 'This form must be sent from this site.')
  }
}

/**
 * The fields of an `application/x-www-form-urlencoded` body of at most `maxBytes`. A field
 * given twice is refused unless `repeatable` names it (the consent's scope checkboxes).
 */
export async function readForm(
  request: Request,
  maxBytes: number,
  repeatable: readonly string[] = [],
): Promise<URLSearchParams> {
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') {
    await request.body?.cancel().catch(() => undefined)
    throw new FormError(415, 'Send the form as application/x-www-form-urlencoded.')
  }
  let bytes: Uint8Array
  try {
    bytes = await readRequestBody(request, { maxBytes })
  } catch (error) {
    if (error instanceof BodyReadError) {
      throw new FormError(
        error.code === 'BODY_TOO_LARGE' ? 413 : 400,
        'The form is too large or unreadable.',
      )
    }
    throw error
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new FormError(400, 'The form is not UTF-8.')
  }
  const fields = new URLSearchParams(text)
  const seen = new Set<string>()
  for (const name of fields.keys()) {
    if (seen.has(name) && !repeatable.includes(name)) {
      throw new FormError(400, 'A field of the form was sent twice.')
    }
    seen.add(name)
  }
  return fields
}

/** One field, at most `maxLength` characters (longer is refused: nothing legitimate is). */
export function field(fields: URLSearchParams, name: string, maxLength: number): string {
  const value = fields.get(name) ?? ''
  if (value.length > maxLength) throw new FormError(400, 'A field of the form is too long.')
  return value
}
