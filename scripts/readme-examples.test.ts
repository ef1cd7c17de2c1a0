// Every package README opens with a runnable example. This runs the first ```ts block of each
// README with Node 24 (type stripping, sources through the @api-blocks/source condition) and
// expects it to exit cleanly, so the documented example cannot rot.
import { execFile } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, test } from 'vitest'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
// Inside the repository (so @api-blocks/* resolve) but not under node_modules, where Node
// refuses to strip types.
mkdirSync(join(root, '.tmp'), { recursive: true })
const scratch = mkdtempSync(join(root, '.tmp', 'readme-'))

const packages = readdirSync(join(root, 'packages')).filter((name) => {
  const manifest = join(root, 'packages', name, 'package.json')
  return existsSync(manifest) && !JSON.parse(readFileSync(manifest, 'utf8')).private
})

describe('README examples run', () => {
  test.each(packages)(
    '%s',
    async (name) => {
      const readme = readFileSync(join(root, 'packages', name, 'README.md'), 'utf8')
      const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1]
      expect(example, 'README.md has a ```ts example').toBeDefined()
      const file = join(scratch, `${name}.ts`)
      writeFileSync(file, example ?? '')
      const { stderr } = await run(process.execPath, ['--conditions=@api-blocks/source', file], {
        cwd: root,
        timeout: 20_000,
      })
      expect(stderr).not.toMatch(/Error/)
    },
    30_000,
  )
})
