/**
 * Throwaway Redis and PostgreSQL servers for fault tests: each on a free port of 127.0.0.1, in
 * a process group of its own, so that a test can pause it (SIGSTOP: the server hangs, its
 * sockets stay open, nothing answers), resume it, kill it (SIGKILL) and start it again on the
 * same port. Nothing is left behind: `stop()` kills the server and removes its files, an exit
 * handler does it for a test process that ends without calling it, and a watchdog shell does
 * it if the test process itself is killed.
 *
 * Redis comes from `redis-server` on PATH (keeping nothing on disk). PostgreSQL comes from
 * `PG_BIN`, else the newest `/usr/lib/postgresql/<version>/bin`, else `/usr/local/pgsql/bin`:
 * `initdb` into a temporary directory, then `postgres` on it, with trust authentication for
 * the `postgres` user. PostgreSQL refuses to run as root, so under root both run as the
 * `postgres` system user (the directory is handed to it).
 *
 * `servicesAvailable()` says whether the binaries are there; fault suites skip, saying why,
 * when they are not.
 *
 * @module
 */
import type { ChildProcess } from 'node:child_process'
import { execFile, execFileSync, spawn } from 'node:child_process'
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A server a test controls. */
export interface TestServer {
  /** The port it listens on, the same across restarts. */
  readonly port: number
  /** Its URL: `redis://127.0.0.1:<port>` or `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string
  /** SIGSTOP to every process of the server: it accepts nothing and answers nothing. */
  pause(): void
  /** SIGCONT: it carries on where it stopped. */
  resume(): void
  /** SIGKILL to every process of the server, resolving when they are gone. */
  kill(): Promise<void>
  /** Starts it again on the same port (and the same data directory), resolving when it answers. */
  restart(): Promise<void>
  /** Kills it for good and removes its files. */
  stop(): Promise<void>
}

function which(command: string): string | undefined {
  try {
    return (
      execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || undefined
    )
  } catch {
    return undefined
  }
}

/** Where the PostgreSQL server binaries are, or `undefined`. */
function postgresBin(): string | undefined {
  const candidates: string[] = []
  if (process.env['PG_BIN']) candidates.push(process.env['PG_BIN'])
  if (existsSync('/usr/lib/postgresql')) {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))
    for (const version of versions) candidates.push(`/usr/lib/postgresql/${version}/bin`)
  }
  candidates.push('/usr/local/pgsql/bin')
  return candidates.find(
    (dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')),
  )
}

/** Which throwaway servers this machine can run. */
export function servicesAvailable(): { redis: boolean; postgres: boolean } {
  return { redis: which('redis-server') !== undefined, postgres: postgresBin() !== undefined }
}

/** A free TCP port on 127.0.0.1 (bound and released: free when this returns). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** The user the servers run as: the `postgres` system user under root, else ourselves. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }))
  return { uid, gid }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether the port answers `probe` with a reply that contains `expected`, within 500 ms. */
function replies(port: number, probe: string, expected: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' })
    let reply = ''
    const done = (answer: boolean) => {
      socket.destroy()
      resolve(answer)
    }
    socket.setTimeout(500, () => done(false))
    socket.on('connect', () => socket.write(probe))
    socket.on('data', (data) => {
      reply += data.toString('latin1')
      if (reply.includes(expected)) done(true)
    })
    socket.on('error', () => done(false))
    socket.on('close', () => done(false))
  })
}

interface Launch {
  command: string
  args: string[]
  cwd: string
  /** Whether the server accepts work (asked every 50 ms after a start). */
  ready: () => Promise<boolean>
}

/** The part common to both servers: a process group, its watchdog, pause, kill, restart. */
async function launchServer(
  port: number,
  url: string,
  launch: Launch,
  dir: string,
  user: { uid: number; gid: number } | undefined,
): Promise<TestServer> {
  let child: ChildProcess | undefined
  let watchdog: ChildProcess | undefined
  let output = ''
  const log = () => output.slice(-4000)

  const signal = (name: NodeJS.Signals) => {
    const pid = child?.pid
    if (pid === undefined || child?.exitCode !== null || child.signalCode !== null) return
    // The process group, and every descendant: PostgreSQL's backends leave the group (each
    // calls setsid()), and a pause must stop them too. Found before the group is signalled:
    // once the server process dies, its children are no longer below it.
    const descendants = descendantsOf(pid)
    process.kill(-pid, name)
    for (const descendant of descendants) {
      try {
        process.kill(descendant, name)
      } catch {
        // Gone meanwhile.
      }
    }
  }
  const killNow = () => {
    try {
      signal('SIGCONT')
      signal('SIGKILL')
    } catch {
      // Already gone.
    }
    try {
      if (watchdog?.pid !== undefined) process.kill(watchdog.pid, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }
  const onExit = () => {
    killNow()
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', onExit)

  const start = async () => {
    output = ''
    const started = spawn(launch.command, launch.args, {
      cwd: launch.cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(user ?? {}),
    })
    child = started
    started.stdout?.on('data', (data: Buffer) => {
      output += data.toString()
    })
    started.stderr?.on('data', (data: Buffer) => {
      output += data.toString()
    })
    const pid = started.pid
    if (pid === undefined) throw new Error(`${launch.command} did not start`)
    // Kills the server and removes the files if this process dies without cleaning up.
    watchdog = spawn('sh', ['-c', WATCHDOG, 'watchdog', String(process.pid), String(pid), dir], {
      detached: true,
      stdio: 'ignore',
    })
    watchdog.unref()
    const deadline = Date.now() + 15_000
    while (!(await launch.ready())) {
      if (started.exitCode !== null || Date.now() > deadline) {
        throw new Error(`${launch.command} on port ${port} did not come up:\n${log()}`)
      }
      await sleep(50)
    }
  }

  const kill = async () => {
    const running = child
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    killNow()
    await exited
    // The group's other processes (PostgreSQL's backends) die with the same signal.
    for (let i = 0; i < 100 && groupAlive(running.pid); i++) await sleep(20)
  }

  await start()
  return {
    port,
    url,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    kill,
    restart: async () => {
      await kill()
      await start()
    },
    stop: async () => {
      await kill()
      process.removeListener('exit', onExit)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * The watchdog (`sh -c WATCHDOG watchdog <test pid> <server pid> <directory>`): once the test
 * process is gone, it kills every process of the server and removes its directory. Killing the
 * group is not enough: PostgreSQL's children each leave it (setsid()), and a child stopped by a
 * pause never notices that the postmaster died, so it would stay for ever. So the watchdog
 * stops the group (no more forks), walks /proc for every process below the server (as
 * `descendantsOf` does; /proc/<pid>/stat is "pid (comm) state ppid …"), and sends each SIGCONT
 * and SIGKILL, then the group.
 */
const WATCHDOG = `
parent=$1 server=$2 dir=$3
while kill -0 "$parent" 2>/dev/null; do sleep 1; done
kill -STOP -"$server" 2>/dev/null
found=" $server "
more=1
while [ "$more" = 1 ]; do
  more=0
  for stat in /proc/[0-9]*/stat; do
    line=
    read -r line < "$stat" 2>/dev/null || continue
    pid=\${stat#/proc/}
    pid=\${pid%/stat}
    set -- \${line##*') '}
    case "$found" in *" $pid "*) continue ;; esac
    case "$found" in *" $2 "*) found="$found$pid " more=1 ;; esac
  done
done
for pid in $found; do kill -CONT "$pid"; kill -KILL "$pid"; done 2>/dev/null
kill -CONT -"$server" 2>/dev/null
kill -KILL -"$server" 2>/dev/null
rm -rf "$dir"
`

/** The processes below `pid`, from /proc (Linux): children, their children, and so on. */
function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const siblings = parents.get(ppid) ?? []
      siblings.push(Number(entry))
      parents.set(ppid, siblings)
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = []
  const queue = [pid]
  while (queue.length > 0) {
    for (const childPid of parents.get(queue.shift() as number) ?? []) {
      found.push(childPid)
      queue.push(childPid)
    }
  }
  return found
}

function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}

/** A temporary directory the server user owns. */
function serverDirectory(prefix: string, user: { uid: number; gid: number } | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  if (user !== undefined) chownSync(dir, user.uid, user.gid)
  return dir
}

/**
 * Starts a Redis server on a free port, keeping nothing on disk (no RDB, no AOF), as a
 * cache-only deployment runs: a restart loses every key.
 *
 * @example
 * ```ts
 * const redis = await startRedis()
 * redis.pause() // every command hangs
 * await redis.stop()
 * ```
 */
export async function startRedis(): Promise<TestServer> {
  const command = which('redis-server')
  if (command === undefined) throw new Error('redis-server is not on PATH')
  const port = await freePort()
  const user = serverUser()
  const dir = serverDirectory('api-blocks-redis-', user)
  return launchServer(
    port,
    `redis://127.0.0.1:${port}`,
    {
      command,
      args: [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      cwd: dir,
      ready: () => replies(port, 'PING\r\n', '+PONG'),
    },
    dir,
    user,
  )
}

/**
 * Initialises a PostgreSQL cluster in a temporary directory and starts it on a free port
 * (fsync off: a test database that survives a killed server, not a crashed machine). Connect as `postgres` without a password.
 *
 * @example
 * ```ts
 * const postgres = await startPostgres()
 * const pool = new pg.Pool({ connectionString: postgres.url })
 * ```
 */
export async function startPostgres(): Promise<TestServer> {
  const bin = postgresBin()
  if (bin === undefined) throw new Error('no PostgreSQL server binaries (set PG_BIN)')
  const port = await freePort()
  const user = serverUser()
  const dir = serverDirectory('api-blocks-postgres-', user)
  const data = join(dir, 'data')
  const sockets = join(dir, 'sockets')
  mkdirSync(sockets)
  if (user !== undefined) chownSync(sockets, user.uid, user.gid)
  execFileSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    { cwd: dir, stdio: 'pipe', ...(user ?? {}) },
  )
  return launchServer(
    port,
    `postgres://postgres@127.0.0.1:${port}/postgres`,
    {
      command: join(bin, 'postgres'),
      args: [
        '-D',
        data,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${sockets}`,
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=40',
        '-c',
        'shared_buffers=16MB',
      ],
      cwd: dir,
      // pg_isready succeeds once the server accepts connections (not while it recovers).
      ready: () =>
        new Promise<boolean>((resolve) => {
          execFile(
            join(bin, 'pg_isready'),
            ['-q', '-h', '127.0.0.1', '-p', String(port), '-t', '1'],
            (error) => resolve(error === null),
          )
        }),
    },
    dir,
    user,
  )
}
