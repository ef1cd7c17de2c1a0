/**
 * How many file descriptors this process may hold open (its soft `RLIMIT_NOFILE`), so that
 * `serve()` can keep its connections below it. Node has no API for `getrlimit(2)`; Node also
 * raises the soft limit to the hard one at start-up, so the number read here is the one in force.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

// `/proc/self/limits`: "Max open files            20000                20000                files"
const PROC_LINE = /^Max open files\s+(\d+|unlimited)\s/m

/**
 * The soft limit on open file descriptors: `Infinity` when unlimited, `undefined` when it cannot
 * be read (Windows, which has no such limit for sockets, or a system where neither
 * `/proc/self/limits` nor `sh -c 'ulimit -n'` answers).
 */
export function openFileLimit(): number | undefined {
  if (process.platform === 'win32') return undefined
  if (process.platform === 'linux') {
    try {
      const match = PROC_LINE.exec(readFileSync('/proc/self/limits', 'latin1'))
      if (match !== null) return parseLimit(match[1]!)
    } catch {
      // no procfs (a container without it): ask the shell below
    }
  }
  try {
    // A child inherits the limit; `ulimit -n` is POSIX (the soft limit).
    const out = execFileSync('/bin/sh', ['-c', 'ulimit -n'], {
      encoding: 'latin1',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2000,
    })
    return parseLimit(out.trim())
  } catch {
    return undefined
  }
}

function parseLimit(text: string): number | undefined {
  if (text === 'unlimited') return Number.POSITIVE_INFINITY
  const value = Number(text)
  return Number.isSafeInteger(value) && value > 0 ? value : undefined
}

/** What `serve()` assumes when {@link openFileLimit} cannot tell: the usual default soft limit. */
export const ASSUMED_OPEN_FILE_LIMIT = 1024

/**
 * The connections to accept under a limit of `limit` descriptors: 90% of it, and at least 64
 * descriptors fewer, kept for the process's other sockets (database and Redis connections,
 * outgoing requests) and files. At least 1.
 */
export function connectionsWithin(limit: number): number {
  if (limit === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY
  return Math.max(1, limit - Math.max(64, Math.ceil(limit / 10)))
}
