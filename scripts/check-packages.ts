// Package gates for every published workspace: publint --strict, attw (esm-only profile), and
// the house rules publint does not know (README with an example, sideEffects, engines).
// Run after `npm run build`. Exits non-zero on the first package that fails.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

interface Manifest {
  name: string
  private?: boolean
  sideEffects?: boolean
  engines?: { node?: string }
  exports?: Record<string, unknown>
}

const failures: string[] = []
const only = process.argv.slice(2)
for (const name of readdirSync('packages')) {
  const dir = join('packages', name)
  const manifestPath = join(dir, 'package.json')
  if (!existsSync(manifestPath)) continue
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest
  if (manifest.private || (only.length > 0 && !only.includes(name))) continue
  const fail = (why: string) => failures.push(`${manifest.name}: ${why}`)
  if (manifest.sideEffects !== false) fail('"sideEffects": false is missing')
  if (manifest.engines?.node !== '>=22.12') fail('engines.node must be ">=22.12"')
  if (!manifest.exports?.['./package.json']) fail('"./package.json" is not exported')
  const readme = existsSync(join(dir, 'README.md'))
    ? readFileSync(join(dir, 'README.md'), 'utf8')
    : ''
  if (!/```(ts|typescript|js)\n/.test(readme)) fail('README.md with a runnable example is missing')
  for (const [tool, args] of [
    ['publint', ['--strict', dir]],
    ['attw', ['--pack', dir, '--profile', 'esm-only', '--format', 'table-flipped']],
  ] as const) {
    try {
      execFileSync('npx', ['--no-install', tool, ...args], { stdio: 'pipe' })
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: Buffer; stderr?: Buffer }
      fail(`${tool} failed\n${stdout.toString()}${stderr.toString()}`)
    }
  }
  console.log(`checked ${manifest.name}`)
}
if (failures.length > 0) {
  console.error(failures.join('\n'))
  process.exit(1)
}
