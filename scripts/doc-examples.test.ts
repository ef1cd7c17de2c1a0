// Every TypeScript example in the documentation compiles. Each ```ts block of every README and
// guide (README.md, CONTRIBUTING.md, docs/*.md, packages/*/README.md, examples/*/README.md) is
// written to a scratch folder inside the repository (.tmp/doc-examples, so that @api-blocks/*
// and the other dependencies resolve as they do for the repository's own code) as a module of
// its own, and one `tsc` run checks them all with the repository's compiler settings
// (tsconfig.base.json, the `@api-blocks/source` condition, Node's types). Three settings are
// relaxed, since they are about the library's own hygiene, not about whether a user's code
// compiles: noUnusedLocals, noUnusedParameters (an example may declare what it only shows)
// and isolatedDeclarations (an example's exports need no explicit types). The DOM library
// stays, as in the repository: the sources the examples resolve to use it internally. What a
// user without it sees (`response.json()` is `unknown` under Node's types) is checked by
// scripts/consumer.ts, on the packed packages.
//
// A block that cannot compile on its own (a fragment continuing the block before it, a shape
// written for reading) opts out with a comment on the line just above its fence, giving why:
//
//   <!-- typecheck: skip (continues the example above) -->
//
// The opted-out blocks are listed in the test output, so that they stay few.
import { execFile } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, test } from 'vitest'
import { codeBlocks, readText, repositoryFiles, root } from './repository.ts'

const run = promisify(execFile)
const scratch = join(root, '.tmp', 'doc-examples')

/** The opt-out marker; the reason in parentheses is required. */
const SKIP = /^<!--\s*typecheck:\s*skip\s*\((.+)\)\s*-->$/

const documents = repositoryFiles(['.changeset']).filter(
  (file) =>
    /^(README|CONTRIBUTING)\.md$/.test(file) ||
    /^docs\/[^/]+\.md$/.test(file) ||
    /^(packages|examples)\/[^/]+\/README\.md$/.test(file),
)

interface Example {
  readonly document: string
  /** Line of the opening fence in the document. */
  readonly line: number
  readonly file: string
  readonly code: string
  readonly skipped?: string
}

const examples: Example[] = documents.flatMap((document) =>
  codeBlocks(readText(document))
    .filter((block) => block.lang === 'ts' || block.lang === 'typescript')
    .map((block) => {
      const skipped = SKIP.exec(block.before)?.[1]
      return {
        document,
        line: block.line,
        file: `${document.replaceAll('/', '__').replace(/\.md$/, '')}__L${block.line}.ts`,
        code: block.code,
        ...(skipped === undefined ? {} : { skipped }),
      }
    }),
)
const checked = examples.filter((example) => example.skipped === undefined)

/** tsc's diagnostics per scratch file, translated to document lines. */
const errors = new Map<string, string[]>()
const elsewhere: string[] = []

beforeAll(async () => {
  rmSync(scratch, { recursive: true, force: true })
  mkdirSync(scratch, { recursive: true })
  writeFileSync(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.base.json',
      compilerOptions: {
        types: ['node'],
        noUnusedLocals: false,
        noUnusedParameters: false,
        isolatedDeclarations: false,
        declaration: false,
      },
      include: ['*.ts'],
    }),
  )
  for (const example of checked) writeFileSync(join(scratch, example.file), `${example.code}\n`)
  const tsc = join(root, 'node_modules', '.bin', 'tsc')
  const output = await run(tsc, ['-p', scratch, '--pretty', 'false'], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    ({ stdout }) => stdout,
    (error: { code?: unknown; stdout?: string; stderr?: string }) => {
      // tsc exits 1 or 2 with its diagnostics; anything else (not found, killed) is no check.
      if (typeof error.code !== 'number') throw error
      const printed = `${error.stdout ?? ''}${error.stderr ?? ''}`
      if (printed.trim() === '') throw new Error(`tsc exited ${error.code} and printed nothing`)
      return printed
    },
  )
  const byFile = new Map(checked.map((example) => [example.file, example]))
  for (const line of output.split('\n')) {
    const match = /^(.*?)\((\d+),(\d+)\): (error TS\d+: .*)$/.exec(line.trim())
    if (match === null) {
      if (line.trim() !== '' && !line.startsWith(' ')) elsewhere.push(line.trim())
      continue
    }
    const example = byFile.get(match[1]!.split(/[\\/]/).pop()!)
    if (example === undefined || !match[1]!.includes('doc-examples')) {
      elsewhere.push(line.trim())
      continue
    }
    const at = `${example.document}:${example.line + Number(match[2])}:${match[3]}`
    errors.set(example.file, [...(errors.get(example.file) ?? []), `${at} ${match[4]}`])
  }
}, 120_000)

describe('TypeScript examples in the documentation compile', () => {
  test('tsc reports nothing outside the examples', () => {
    expect(elsewhere).toEqual([])
  })

  test.each(
    documents.filter((document) => checked.some((example) => example.document === document)),
  )('%s', (document) => {
    const found = checked
      .filter((example) => example.document === document)
      .flatMap((example) => errors.get(example.file) ?? [])
    expect(found).toEqual([])
  })

  test('opted-out blocks give a reason, and are listed here', () => {
    const skipped = examples.filter((example) => example.skipped !== undefined)
    if (skipped.length > 0) {
      console.log(
        `TypeScript examples not type-checked (${skipped.length}):\n${skipped
          .map((example) => `  ${example.document}:${example.line} (${example.skipped})`)
          .join('\n')}`,
      )
    }
    for (const example of skipped) expect(example.skipped?.trim()).not.toBe('')
  })

  test('the opt-out marker needs a reason', () => {
    expect(SKIP.exec('<!-- typecheck: skip (continues the example above) -->')?.[1]).toBe(
      'continues the example above',
    )
    expect(SKIP.exec('<!-- typecheck: skip -->')).toBeNull()
    const [marked, plain] = codeBlocks(
      [
        'Some text.',
        '',
        '<!-- typecheck: skip (a fragment) -->',
        '```ts',
        'handler(request)',
        '```',
        '',
        '```ts',
        'const x = 1',
        '```',
      ].join('\n'),
    )
    expect(SKIP.exec(marked!.before)?.[1]).toBe('a fragment')
    expect(marked!.line).toBe(4)
    expect(SKIP.exec(plain!.before)).toBeNull()
  })
})
