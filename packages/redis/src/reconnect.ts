/**
 * A reconnect schedule for the client you give the stores: capped exponential backoff with
 * jitter, as node-redis's `socket.reconnectStrategy` takes it. node-redis's own default waits
 * `min(2^retries × 50, 2000)` ms plus up to 200 ms, but gives up for good after a socket timeout
 * (`socketTimeout`), which is the very failure a hung server causes; this one never gives up.
 *
 * @module
 */

/**
 * Options of {@link reconnectBackoff}.
 *
 * @example
 * ```ts
 * const options: ReconnectBackoffOptions = { baseMs: 50, maxMs: 2_000 }
 * ```
 */
export interface ReconnectBackoffOptions {
  /** The first step, in milliseconds (default 50); each retry doubles it. */
  baseMs?: number
  /** The longest step, in milliseconds (default 2,000). */
  maxMs?: number
  /** A number in [0, 1) (default `Math.random`): the jitter. */
  random?: () => number
}

/**
 * A reconnect strategy: before retry `n` (from 0) it waits a step of `min(maxMs, baseMs × 2^n)`,
 * half of it fixed and half drawn at random ("equal jitter"), so that instances which lost the
 * server together do not all knock at once, and none retries in a tight loop. It never gives
 * up: a server that comes back is reconnected to within `maxMs`.
 *
 * @example
 * ```ts
 * import { reconnectBackoff } from '@api-blocks/redis'
 * import { createClient } from 'redis'
 *
 * const client = createClient({
 *   url: process.env.REDIS_URL,
 *   socket: { connectTimeout: 500, reconnectStrategy: reconnectBackoff({ maxMs: 2_000 }) },
 * })
 * ```
 */
export function reconnectBackoff(
  options: ReconnectBackoffOptions = {},
): (retries: number) => number {
  const { baseMs = 50, maxMs = 2_000, random = Math.random } = options
  if (!(baseMs > 0) || !(maxMs >= baseMs) || !Number.isFinite(maxMs)) {
    throw new RangeError(`reconnectBackoff(): need 0 < baseMs <= maxMs, got ${baseMs} and ${maxMs}`)
  }
  return (retries) => {
    // 2^retries overflows to Infinity past 1023 retries; min() keeps the cap.
    const step = Math.min(maxMs, baseMs * 2 ** Math.max(0, retries))
    return Math.round(step / 2 + random() * (step / 2))
  }
}
