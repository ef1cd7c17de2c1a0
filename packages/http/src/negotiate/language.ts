/**
 * Accept-Language negotiation by RFC 4647 §3.4 lookup. The matching itself lives in
 * @api-blocks/problem-details (`negotiateLanguage`), shared with problem titles; this module
 * only adds the Vary token and a fallback.
 *
 * @module
 */
import { negotiateLanguage } from '@api-blocks/problem-details'
import type { Negotiated } from './types.ts'

/**
 * Picks the best of `available` language tags for an Accept-Language value (RFC 4647 §3.4
 * lookup: `de-CH-1996` → `de-CH` → `de`), or `fallback` when nothing matches. A value over
 * `MAX_ACCEPT_LANGUAGE_LENGTH` (1024) is treated as absent. Never throws.
 *
 * @example
 * ```ts
 * negotiateContentLanguage('de-CH, en;q=0.5', ['en', 'de'], 'en')
 * // { choice: 'de', vary: ['Accept-Language'] }
 * ```
 */
export function negotiateContentLanguage(
  acceptLanguage: string | null | undefined,
  available: readonly string[],
  fallback?: string,
): Negotiated<string> {
  return {
    choice: negotiateLanguage(acceptLanguage, available, fallback),
    vary: ['Accept-Language'],
  }
}
