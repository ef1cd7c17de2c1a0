/**
 * How the middleware answers a request it refuses: the `IdempotencyError`'s problem, as
 * `application/problem+json`, with the error's header fields (`Retry-After`).
 *
 * @module
 */
import { toProblemResponse } from '@api-blocks/problem-details'
import type { IdempotencyError } from './error.ts'
import type { ResolvedOptions } from './options.ts'

/** @internal The problem response of `error`, its types resolved against `problemBase`. */
export function refusal(
  config: ResolvedOptions,
  error: IdempotencyError,
  request: Request,
): Response {
  return toProblemResponse(error.toProblem(), {
    request,
    headers: error.headers,
    ...(config.problemBase === undefined ? {} : { base: config.problemBase }),
  })
}
