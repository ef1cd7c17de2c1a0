// The service as `npm start` runs it: src/main.ts in a process of its own on a free port, for
// the tests that need real clients on real sockets (WebSocket, server-sent events).
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url))

/** A started service: its base URL, and a way to stop it. */
export interface ServiceProcess {
  /** `http://127.0.0.1:<port>` */
  base: string
  stop(): Promise<void>
}

/** Starts src/main.ts with `env` (PORT=0 and LOG_LEVEL=silent unless given) and waits until it listens. */
export async function startService(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--conditions=@api-blocks/source', main], {
    env: { PATH: process.env['PATH'] ?? '', PORT: '0', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk
  })
  const exited = once(child, 'exit')
  for (;;) {
    const chunk = await Promise.race([
      once(child.stdout!, 'data').then(([data]) => String(data)),
      exited.then(([code]) => {
        throw new Error(`the service exited (${code}): ${stderr}`)
      }),
    ])
    stdout += chunk
    const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)
    if (match) {
      child.stdout?.resume()
      return {
        base: match[1] as string,
        stop: async () => {
          if (child.exitCode !== null) return
          child.kill('SIGTERM')
          await exited
        },
      }
    }
  }
}
