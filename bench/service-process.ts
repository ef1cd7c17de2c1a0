// Servers in child processes, for the suites that load them over the network: the reference
// service (idempotency, service), `npm start`'s entry with rate limits raised out of the way, on
// a free port, and the two authorisation servers of the oauth suite; each pinned to CPU 0 where
// `taskset` exists (the client then pins itself to CPU 1).
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** Whether `taskset` can pin processes here (Linux with util-linux). */
export const pinned: boolean =
  process.platform === 'linux' && spawnSync('taskset', ['-c', '1', 'true']).status === 0

/** Pins this process (the load generator) to CPU 1, away from the service on CPU 0. */
export function pinClient(): void {
  if (pinned) spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)])
}

export interface Service {
  url: string
  /** The service process's CPU time so far (user + system), in µs; NaN where /proc is absent. */
  cpu(): number
  stop(): void
}

const here = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '')

/**
 * Starts the service of the checkout at `root` (default this one) with `env` on top of the
 * bench's defaults, and resolves once it prints its address.
 */
export function startService(
  env: Record<string, string> = {},
  root: string = here,
): Promise<Service> {
  return startNode([`${root}/examples/service/src/main.ts`], {
    cwd: `${root}/examples/service`,
    env: {
      // Each run names its own store: the bench's own REDIS_URL / DATABASE_URL must not leak
      // into the others (with both set the service keeps its records in PostgreSQL).
      REDIS_URL: '',
      DATABASE_URL: '',
      PORT: '0',
      RATE_LIMIT_PER_SECOND: '100000000',
      RATE_LIMIT_PER_HOUR: '100000000',
      ...env,
    },
  })
}

/**
 * Runs `args` (a script and its arguments) with this process's Node binary and the source
 * condition, pinned to CPU 0 where `taskset` exists, and resolves once it prints
 * `listening on <url>`. Its stdout keeps being drained, so a child that logs never stalls on a
 * full pipe.
 */
export async function startNode(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Service> {
  const node = ['--conditions=@api-blocks/source', ...args]
  const child = spawn(
    pinned ? 'taskset' : process.execPath,
    pinned ? ['-c', '0', process.execPath, ...node] : node,
    {
      cwd: options.cwd ?? here,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  const cpu = () => {
    try {
      // /proc/<pid>/stat: utime and stime are the 14th and 15th fields, in clock ticks (100/s).
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')
      return (Number(fields?.[11]) + Number(fields?.[12])) * 10_000
    } catch {
      return Number.NaN
    }
  }
  let output = ''
  child.stdout.setEncoding('utf8')
  for await (const chunk of child.stdout) {
    output += chunk
    const match = /listening on (http:\/\/[^\s"]+)/.exec(output)
    if (match) {
      child.stdout.resume()
      return { url: match[1] ?? '', cpu, stop: () => child.kill() }
    }
  }
  throw new Error(`${args.join(' ')} did not start:\n${output}`)
}

/** The middle value; for an even count, the mean of the two middle ones. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}
