// The registry these machines reach serves only the Linux builds of packages that ship one
// native binary per platform (biome, rolldown, oxc, …). `npm install` then leaves the other
// platforms' optional dependencies out of package-lock.json, and `npm ci` refuses that lock
// ("Missing: @biomejs/cli-darwin-arm64 from lock file"). This adds an entry for each such
// optional dependency, with the exact version its parent asks for and the os / cpu / libc
// its name states, so `npm ci` accepts the lock and, as for any optional dependency of
// another platform, installs nothing for it. Run it after `npm install` changed the lock:
//   node scripts/complete-lockfile.ts
import { readFileSync, writeFileSync } from 'node:fs'

interface Entry {
  version?: string
  dev?: boolean
  optional?: boolean
  optionalDependencies?: Record<string, string>
  os?: string[]
  cpu?: string[]
  libc?: string[]
}

const path = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(path, 'utf8')) as { packages: Record<string, Entry> }
const OS = [
  'android',
  'darwin',
  'freebsd',
  'linux',
  'win32',
  'openharmony',
  'sunos',
  'aix',
  'netbsd',
  'openbsd',
]
const CPU = [
  'arm64',
  'x64',
  'ia32',
  'arm',
  'ppc64',
  'riscv64',
  's390x',
  'loong64',
  'wasm32',
  'mips64el',
]

function platformOf(name: string): Pick<Entry, 'os' | 'cpu' | 'libc'> {
  const parts = name.split('/').pop()?.split('-') ?? []
  const platform: Pick<Entry, 'os' | 'cpu' | 'libc'> = {}
  const os = parts.find((part) => OS.includes(part))
  const cpu = parts.find((part) => CPU.includes(part) || part === 'arm64' || part === 'x64')
  if (os) platform.os = [os]
  if (cpu) platform.cpu = [cpu]
  if (parts.includes('musl') || parts.includes('musleabihf')) platform.libc = ['musl']
  else if (os === 'linux' && (parts.includes('gnu') || parts.includes('gnueabihf')))
    platform.libc = ['glibc']
  return platform
}

// Where npm would look for `name` from the package at `location`: its own node_modules, then
// each ancestor's, up to the root.
function resolves(location: string, name: string): boolean {
  let at = location
  for (;;) {
    if (lock.packages[`${at ? `${at}/` : ''}node_modules/${name}`]) return true
    if (at === '') return false
    const cut = at.lastIndexOf('node_modules/')
    at = cut <= 0 ? '' : at.slice(0, cut - 1)
  }
}

let added = 0
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolves(location, name) || !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) continue
    lock.packages[`node_modules/${name}`] = {
      version: spec,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...platformOf(name),
    }
    added += 1
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
)
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`complete-lockfile: added ${added} optional dependencies of other platforms`)
