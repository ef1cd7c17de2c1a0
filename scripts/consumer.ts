// The consumer check: api-blocks as a user gets it. Every published package is packed
// (`npm pack`, what the registry would serve) and installed from its tarball into a fresh
// project outside the repository, set up as a Node user's project is:
//
//   package.json  "type": "module"
//   tsconfig      lib ["es2023"] (no DOM library), types ["node"], module/moduleResolution
//                 NodeNext, strict, skipLibCheck false (the published .d.ts files are checked)
//
// There it type-checks every public entry point and each package README's first ```ts example,
// runs each of those examples, and runs an Express app that puts blocks in front of its own
// route through `toExpressMiddleware` of @api-blocks/express, checking that both answer.
//
// Run after `npm run build`: `npm run check:consumer` (CI runs it in .ci/run). Tests of the
// README examples that need servers read REDIS_URL and DATABASE_URL as the repository's do.
// Exits non-zero and says what failed; `--keep` leaves the project folder for a look.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { codeBlocks, publishedPackages, readText, root } from './repository.ts'

const run = promisify(execFile)
const started = performance.now()
const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(1)} s`
const failures: string[] = []
const step = (what: string): void => console.log(`[${elapsed()}] ${what}`)

const work = mkdtempSync(join(tmpdir(), 'api-blocks-consumer-'))
const tarballs = join(work, 'tarballs')
const project = join(work, 'project')
mkdirSync(tarballs)
mkdirSync(project)

interface Manifest {
  name: string
  exports?: Record<string, unknown>
  peerDependencies?: Record<string, string>
}

const packages = publishedPackages().map(({ dir, name }) => ({
  dir,
  name,
  manifest: JSON.parse(readText(`packages/${dir}/package.json`)) as Manifest,
}))

/** The version of a dependency the repository itself installed (so the check uses npm's cache). */
function repositoryVersion(name: string): string {
  const manifest = join(root, 'node_modules', name, 'package.json')
  if (!existsSync(manifest)) throw new Error(`${name} is not installed in the repository`)
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
}

async function sh(command: string, args: readonly string[], cwd: string, timeout = 120_000) {
  return run(command, args, {
    cwd,
    timeout,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_OPTIONS: '' },
  })
}

function output(error: unknown): string {
  const {
    stdout = '',
    stderr = '',
    message = '',
  } = error as {
    stdout?: string
    stderr?: string
    message?: string
  }
  return `${stdout}${stderr}`.trim() || message
}

try {
  // 1. Pack what would be published.
  const unbuilt = packages.filter(({ dir }) => !existsSync(join(root, 'packages', dir, 'dist')))
  if (unbuilt.length > 0) {
    throw new Error(
      `No dist/ in ${unbuilt.map(({ dir }) => dir).join(', ')}: run \`npm run build\` first.`,
    )
  }
  step(`packing ${packages.length} packages`)
  const packed = await sh(
    'npm',
    [
      'pack',
      '--json',
      '--pack-destination',
      tarballs,
      ...packages.flatMap(({ dir }) => ['-w', `packages/${dir}`]),
    ],
    root,
  )
  const files = (JSON.parse(packed.stdout) as { filename: string }[]).map((entry) =>
    join(tarballs, entry.filename.replace(/^@/, '').replace('/', '-')),
  )

  // 2. The project, and what its examples import from the registry.
  const examples = packages.flatMap(({ dir }) => {
    const block = codeBlocks(readText(`packages/${dir}/README.md`)).find(
      (candidate) => candidate.lang === 'ts',
    )
    if (block === undefined) {
      failures.push(`packages/${dir}/README.md has no \`\`\`ts example`)
      return []
    }
    return [{ dir, file: `readme-${dir}.ts`, code: block.code }]
  })
  const imported = new Set<string>()
  for (const { code } of examples) {
    for (const match of code.matchAll(/from\s+'([^'.][^']*)'/g)) {
      const specifier = match[1]!
      if (specifier.startsWith('node:') || specifier.startsWith('@api-blocks/')) continue
      const parts = specifier.split('/')
      imported.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!)
    }
  }
  // Types of what the examples and the public .d.ts files import: the peers, their types, and
  // vitest for the conformance suites on the /testing entry points.
  const peers = new Set(
    packages.flatMap(({ manifest }) => Object.keys(manifest.peerDependencies ?? {})),
  )
  const registry = [
    ...new Set([...imported, ...peers, 'express', '@types/express', '@types/node', '@types/pg']),
  ]
    .filter((name) => !name.startsWith('@api-blocks/'))
    .sort()
    .map((name) => `${name}@${repositoryVersion(name)}`)

  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'api-blocks-consumer', private: true, type: 'module' }, null, 2)}\n`,
  )
  writeFileSync(
    join(project, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: 'es2023',
          lib: ['es2023'],
          types: ['node'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: false,
          noEmit: true,
        },
        include: ['*.ts'],
      },
      null,
      2,
    )}\n`,
  )
  step(`installing the tarballs and ${registry.length} registry packages`)
  await sh(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      ...files,
      ...registry,
    ],
    project,
    150_000,
  )

  // 3. Type-check: every public entry point, every README example, the Express app.
  const entryPoints = packages.flatMap(({ name, manifest }) =>
    Object.keys(manifest.exports ?? { '.': true })
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => (subpath === '.' ? name : `${name}/${subpath.slice(2)}`)),
  )
  writeFileSync(
    join(project, 'entry-points.ts'),
    `${entryPoints.map((specifier, index) => `import * as entry${index} from '${specifier}'`).join('\n')}\nexport const all: unknown[] = [${entryPoints.map((_, index) => `entry${index}`).join(', ')}]\n`,
  )
  for (const { file, code } of examples) writeFileSync(join(project, file), `${code}\n`)

  const expressExports = await sh(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const m = await import('@api-blocks/express'); console.log(Object.keys(m).join(' '))",
    ],
    project,
  ).then(
    ({ stdout }) => stdout.trim().split(' '),
    (): string[] => [],
  )
  const hasMiddlewareForm = expressExports.includes('toExpressMiddleware')
  if (hasMiddlewareForm) {
    writeFileSync(join(project, 'express-app.ts'), expressApp())
  } else {
    failures.push(
      'MISSING: @api-blocks/express does not export toExpressMiddleware (the `(req, res, next)` ' +
        `middleware form of a block; exports found: ${expressExports.join(', ') || 'none'}). ` +
        'The Express check did not run.',
    )
  }

  step('type-checking (lib es2023, types node, strict, skipLibCheck false)')
  const tsc = join(root, 'node_modules', '.bin', 'tsc')
  await sh(tsc, ['-p', project, '--pretty', 'false'], project).catch((error: unknown) => {
    // Declaration files of other libraries are theirs to fix (PGlite's need the DOM library and
    // Emscripten's types): shown, not counted. Everything else, ours included, fails the check.
    const lines = output(error).split('\n')
    const theirs = lines.filter((line) => /^node_modules\/(?!@api-blocks\/)/.test(line))
    const ours = lines.filter((line) => !theirs.includes(line))
    if (theirs.length > 0) {
      const libraries = new Set(
        theirs.map((line) => /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(line)?.[1] ?? line),
      )
      console.log(
        `  note: ${theirs.length} errors in the declaration files of ${[...libraries].join(', ')} (not api-blocks; a user with skipLibCheck false sees them too)`,
      )
    }
    if (ours.some((line) => line.trim() !== '')) {
      failures.push(`tsc in the consumer project:\n${ours.join('\n')}`)
    }
  })

  // 4. Run: each README example, then the Express app.
  step(`running ${examples.length} README examples`)
  await Promise.all(
    examples.map(async ({ dir, file }) => {
      try {
        await sh(process.execPath, [file], project, 30_000)
      } catch (error) {
        failures.push(
          `packages/${dir}/README.md, first example, failed in the consumer project:\n${output(error)}`,
        )
      }
    }),
  )
  // The README promises that CommonJS code can require() the packages (Node >= 22.12 loads ES
  // modules synchronously, as long as they have no top-level await). The /testing entry points
  // are left out: they import vitest, which runs them.
  const requirable = entryPoints.filter((specifier) => !specifier.endsWith('/testing'))
  writeFileSync(
    join(project, 'require-all.cjs'),
    `for (const specifier of ${JSON.stringify(requirable)}) require(specifier)\n`,
  )
  await sh(process.execPath, ['require-all.cjs'], project, 30_000).catch((error: unknown) => {
    failures.push(`require() of the entry points from CommonJS:\n${output(error)}`)
  })
  if (hasMiddlewareForm) {
    step('running an Express app with blocks as middleware')
    await sh(process.execPath, ['express-app.ts'], project, 30_000).then(
      ({ stdout }) => console.log(stdout.trim()),
      (error: unknown) => failures.push(`the Express app:\n${output(error)}`),
    )
  }
} catch (error) {
  failures.push(error instanceof Error ? error.message : String(error))
}

if (process.argv.includes('--keep')) console.log(`project kept in ${project}`)
else rmSync(work, { recursive: true, force: true })
step(failures.length === 0 ? 'consumer check passed' : 'consumer check FAILED')
if (failures.length > 0) {
  console.error(`\n${failures.join('\n\n')}`)
  process.exitCode = 1
}

// An Express 5 app as a user writes it: two blocks as `(req, res, next)` middleware in front
// of the app's own route. requestId passes every request on (next() runs the route) and
// labels the response; rateLimit passes two and answers the third itself with a 429 problem.
function expressApp(): string {
  return `import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { toExpressMiddleware } from '@api-blocks/express'
import { requestId } from '@api-blocks/http'
import { MemoryRateLimitStore, rateLimit } from '@api-blocks/rate-limit'

const app = express()
app.use(toExpressMiddleware(requestId()))
app.use(
  toExpressMiddleware(
    rateLimit({
      store: new MemoryRateLimitStore(),
      policies: [{ name: 'demo', quota: 2, windowSeconds: 60 }],
      key: () => 'consumer-check',
      onStoreError: 'fail-open',
    }),
  ),
)
app.get('/hello', (_req, res) => {
  res.json({ hello: 'from express' })
})

const server = app.listen(0, '127.0.0.1')
await once(server, 'listening')
const { port } = server.address() as AddressInfo
const get = () => fetch(\`http://127.0.0.1:\${port}/hello\`)
function expect(ok: boolean, what: string): void {
  if (!ok) throw new Error(what)
}
try {
  const first = await get()
  expect(first.status === 200, \`the route answers 200, got \${first.status}\`)
  expect(((await first.json()) as { hello?: string }).hello === 'from express', 'the body is the route\\'s')
  expect(/^[\\w.:-]{1,200}$/.test(first.headers.get('x-request-id') ?? ''), 'requestId labelled the response')
  expect(first.headers.get('ratelimit-remaining') === '1', 'rateLimit counted the request')
  await (await get()).arrayBuffer()
  const third = await get()
  expect(third.status === 429, \`rateLimit answers the third request with 429, got \${third.status}\`)
  expect(third.headers.get('content-type')?.startsWith('application/problem+json') === true, 'as a problem')
  expect(third.headers.get('x-request-id') !== null, 'labelled by requestId too')
  await third.arrayBuffer()
  console.log('express: the route answered through both blocks; rateLimit answered the third request itself')
} finally {
  server.close()
}
`
}
