// The throwaway servers of scripts/test-services.ts leave nothing behind, even when the test
// process that started them is killed while PostgreSQL is paused: each of PostgreSQL's children
// leaves the postmaster's process group (setsid()), and a stopped child never notices that the
// postmaster died, so the watchdog must find every process of the server, not just the group.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { servicesAvailable } from './test-services.ts'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const harness = pathToFileURL(join(root, 'scripts', 'test-services.ts')).href
const available = servicesAvailable().postgres && existsSync('/proc/self/stat')

/** `[state, ppid]` of a process from /proc, or undefined once it is gone. */
function statOf(pid: number): [string, number] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return [state as string, Number(ppid)]
  } catch {
    return undefined
  }
}

/** Alive: it exists and is no zombie (an exited process its parent has not reaped yet). */
const alive = (pid: number) => {
  const stat = statOf(pid)
  return stat !== undefined && stat[0] !== 'Z'
}

function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    const ppid = statOf(Number(entry))?.[1]
    if (ppid !== undefined) children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
  }
  const found: number[] = []
  for (let queue = [pid]; queue.length > 0; ) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      found.push(child)
      queue.push(child)
    }
  }
  return found
}

function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
  } catch {
    return []
  }
}

// What a failed test must not leave behind either.
const leftovers: { pids: number[]; dir?: string } = { pids: [] }
afterAll(() => {
  for (const pid of leftovers.pids) {
    try {
      process.kill(pid, 'SIGCONT')
      process.kill(pid, 'SIGKILL')
    } catch {
      // Gone.
    }
  }
  if (leftovers.dir !== undefined) rmSync(leftovers.dir, { recursive: true, force: true })
})

describe.skipIf(!available)(
  `scripts/test-services.ts${available ? '' : ' (skipped: no PostgreSQL server binaries or no /proc)'}`,
  () => {
    test('a test process killed while PostgreSQL is paused leaves no process and no directory behind', async () => {
      // The test process: starts PostgreSQL, opens a connection (a backend of its own), pauses
      // the server, says so, and waits to be killed.
      const script = `
import pg from 'pg'
import { startPostgres } from ${JSON.stringify(harness)}
const server = await startPostgres()
const client = new pg.Client({ connectionString: server.url })
client.on('error', () => {})
await client.connect()
await client.query('SELECT 1')
server.pause()
console.log('paused')
setInterval(() => {}, 60_000)
`
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      let output = ''
      child.stdout.on('data', (data: Buffer) => {
        output += data.toString()
      })
      await expect.poll(() => output, { timeout: 30_000, interval: 50 }).toContain('paused')
      const pid = child.pid as number
      const processes = descendantsOf(pid)
      leftovers.pids = processes
      const postmaster = processes.find((p) => commandLine(p)[0]?.endsWith('/postgres'))
      expect(postmaster).toBeDefined()
      const args = commandLine(postmaster as number)
      const dir = dirname(args[args.indexOf('-D') + 1] as string)
      leftovers.dir = dir
      // The postmaster, the checkpointer and the others, and the connection's backend: stopped.
      const server = [postmaster as number, ...descendantsOf(postmaster as number)]
      expect(server.length).toBeGreaterThanOrEqual(3)
      // SIGSTOP takes effect when the kernel next schedules each process: under a loaded machine
      // a process can still show R for a moment after pause() returned.
      await expect
        .poll(() => server.map((p) => statOf(p)?.[0]), { timeout: 10_000, interval: 20 })
        .toEqual(server.map(() => 'T'))
      expect(existsSync(dir)).toBe(true)

      const exited = once(child, 'exit')
      child.kill('SIGKILL')
      await exited
      // The watchdog looks once a second.
      await expect
        .poll(() => processes.filter(alive), { timeout: 5_000, interval: 100 })
        .toEqual([])
      await expect.poll(() => existsSync(dir), { timeout: 2_000, interval: 100 }).toBe(false)
    }, 45_000)
  },
)
