// Rules of the repository that no linter knows, checked over every package's sources. Each
// test lists every offending file (and line) it finds, so a failure says what to change.
// CONTRIBUTING.md ("House rules") says why each rule exists.
import ts from 'typescript'
import { describe, expect, test } from 'vitest'
import { exists, readText, repositoryFiles } from './repository.ts'

const CORE = 'packages/core/'

/** Every TypeScript file under packages/, tests included. */
const packageFiles = repositoryFiles().filter(
  (file) => file.startsWith('packages/') && /\.tsx?$/.test(file) && !file.endsWith('.d.ts'),
)
const isTest = (file: string): boolean =>
  /\.test(-d)?\.ts$/.test(file) || /^packages\/[^/]+\/test\//.test(file)
/** The shipped code: package sources without their tests. */
const sourceFiles = packageFiles.filter((file) => !isTest(file))
const packageOf = (file: string): string => file.split('/')[1]!

/** `file:line: text` for every line of `files` that matches `pattern`. */
function grep(files: readonly string[], pattern: RegExp): string[] {
  const found: string[] = []
  for (const file of files) {
    readText(file)
      .split('\n')
      .forEach((line, index) => {
        if (pattern.test(line)) found.push(`${file}:${index + 1}: ${line.trim()}`)
      })
  }
  return found
}

// Signals of a hand-written or Node-specific encoder: the browser's btoa/atob, the
// alphabet or its swap to base64url, Node's 'base64' encodings, a codec function by name.
const BASE64_SIGNALS = new RegExp(
  [
    /\b(?:btoa|atob)\(/.source,
    /ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/.source,
    /\.replace(?:All)?\(\s*(?:\/\\\+\/g|'\+')\s*,\s*'-'/.source,
    /(?:digest|toString)\(\s*'base64|,\s*'base64(?:url)?'\s*\)/.source,
    /(?:function\s+|(?:const|let)\s+)(?:(?:to|from|encode|decode)Base64(?:url)?|base64(?:url)?)\s*[=(<]/
      .source,
  ].join('|'),
  'i',
)

describe('no hidden coupling', () => {
  test('no Symbol.for( outside packages/core, tests included: shared keys come from core', () => {
    // core's sharedContextKey() and body-slot accessors are the one registry of shared symbols.
    expect(
      grep(
        packageFiles.filter((file) => !file.startsWith(CORE)),
        /Symbol\.for\(/,
      ),
    ).toEqual([])
  })

  test('no process.getBuiltinModule: a Node fast path is chosen by the `node` export condition', () => {
    const code = repositoryFiles().filter(
      (file) => /^(packages|examples|bench)\//.test(file) && file.endsWith('.ts'),
    )
    expect(grep(code, /getBuiltinModule/)).toEqual([])
  })

  test('no isPromise: a store method always answers a Promise', () => {
    expect(grep(packageFiles, /\bisPromise\b/)).toEqual([])
  })

  test('no store interface answers a value or a Promise', () => {
    const unions: string[] = []
    for (const file of sourceFiles) {
      const text = readText(file)
      for (const match of text.matchAll(/export interface (\w*Store)\b[^{]*\{/g)) {
        const body = balanced(text, match.index + match[0].length - 1)
        const line = text.slice(0, match.index).split('\n').length
        body.split('\n').forEach((member, offset) => {
          if (/\|\s*Promise<|Promise<[^>]*>\s*\|/.test(member)) {
            unions.push(`${file}:${line + offset}: ${match[1]}: ${member.trim()}`)
          }
        })
      }
    }
    expect(unions).toEqual([])
  })

  test('no middleware checks for a concrete store class', () => {
    const code = sourceFiles.filter((file) => !/memory-store\.ts$/.test(file))
    expect(grep(code, /instanceof\s+\w*Store\b/)).toEqual([])
  })

  test('one base64 and base64url, in core: no encoder of their own elsewhere', () => {
    const files = sourceFiles.filter((file) => !file.startsWith(CORE))
    const named = files.filter((file) => /(?:^|\/)base64(?:url)?\.ts$/.test(file))
    expect([
      ...grep(files, BASE64_SIGNALS),
      ...named.map((file) => `${file}: a base64 module`),
    ]).toEqual([])
  })

  test('the base64 signals find an encoder and leave other code alone', () => {
    const encoders = [
      'return btoa(binary)',
      "return text.replace(/\\+/g, '-').replace(/\\//g, '_')",
      "hash.digest('base64url')",
      "Buffer.from(text, 'base64')",
      'function toBase64url(bytes: Uint8Array): string {',
    ]
    expect(encoders.filter((line) => !BASE64_SIGNALS.test(line))).toEqual([])
    const innocent = [
      "const spaced = text.replaceAll('+', ' ')",
      "export type FingerprintEncoding = 'hex' | 'base64url'",
      'const key = await sha256Base64url(text)',
    ]
    expect(innocent.filter((line) => BASE64_SIGNALS.test(line))).toEqual([])
  })

  test('one canonical JSON writer, in core', () => {
    const files = sourceFiles.filter((file) => !file.startsWith(CORE))
    const defined = grep(
      files,
      /(?:function\s+|(?:const|let)\s+)canonical(?:ize)?J(?:son|SON)\w*\s*[=(<]/,
    )
    const named = files.filter((file) => /canonical-json\.ts$/.test(file))
    expect([...defined, ...named.map((file) => `${file}: a canonical JSON module`)]).toEqual([])
  })

  test('one bounded body reader, in core: no .getReader() elsewhere but the allowed', () => {
    // Reading a stream chunk by chunk is not reading a body whole:
    const allowed = new Set([
      // the node adapter writes a response body to the socket as it streams;
      'packages/node/src/internal/write.ts',
      // the node adapter's Request locks its stream once the body was taken whole without it, so
      // the stream reads as used (locked and disturbed), as Fetch's does: it reads nothing;
      'packages/node/src/internal/incoming-request.ts',
      // the adapter suite's handler and client observe chunking itself (streamed echo, a
      // first chunk before the last), which is what they test.
      'packages/adapter-suite/src/handler.ts',
      'packages/adapter-suite/src/suite.ts',
    ])
    const files = sourceFiles.filter((file) => !file.startsWith(CORE) && !allowed.has(file))
    expect(grep(files, /\.getReader\(/)).toEqual([])
  })
})

/** The text between the brace at `open` and its match. */
function balanced(text: string, open: number): string {
  let depth = 0
  for (let index = open; index < text.length; index++) {
    if (text[index] === '{') depth++
    else if (text[index] === '}' && --depth === 0) return text.slice(open, index + 1)
  }
  return text.slice(open)
}

/** Relative imports and re-exports of a file (type-only ones included), as repository paths. */
function relativeImports(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readText(file), true, true)
  const dir = file.slice(0, file.lastIndexOf('/'))
  return importedFiles
    .map((reference) => reference.fileName)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
    .map((specifier) => {
      const parts = `${dir}/${specifier}`.split('/')
      const path: string[] = []
      for (const part of parts) {
        if (part === '..') path.pop()
        else if (part !== '.') path.push(part)
      }
      return path.join('/')
    })
    .filter((path) => path !== file && exists(path))
}

/**
 * The import circles among `files`: each strongly connected set of files (Tarjan), reported as
 * one loop through it, `a.ts → b.ts → a.ts`, and its size when more files are caught in it.
 */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (node: string): void => {
    index.set(node, counter)
    low.set(node, counter++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) components.push(component.sort())
    }
  }
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node)
  return components.map((component) => {
    // The shortest way back to the first file, by breadth-first search inside the component.
    const members = new Set(component)
    const start = component[0]!
    const previous = new Map<string, string>()
    const queue = [start]
    let end: string | undefined
    while (queue.length > 0 && end === undefined) {
      const node = queue.shift()!
      for (const next of graph.get(node) ?? []) {
        if (!members.has(next)) continue
        if (next === start) {
          end = node
          break
        }
        if (!previous.has(next)) {
          previous.set(next, node)
          queue.push(next)
        }
      }
    }
    const loop = [start]
    for (let node = end; node !== undefined && node !== start; node = previous.get(node)) {
      loop.splice(1, 0, node)
    }
    loop.push(start)
    const more =
      component.length > loop.length - 1 ? ` (${component.length} files in the circle)` : ''
    return `${loop.join(' → ')}${more}`
  })
}

describe('the import graph', () => {
  test('no import circles inside a package, type-only imports included', () => {
    const graph = new Map(packageFiles.map((file) => [file, relativeImports(file)]))
    expect(importCircles(graph)).toEqual([])
  })

  test('the circle finder reports a loop as a path', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
    ])
    expect(importCircles(graph)).toEqual(['a.ts → b.ts → c.ts → a.ts'])
    expect(
      importCircles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', []],
        ]),
      ),
    ).toEqual([])
  })

  // What blocks hand each other about a request lives in core, and nowhere else.
  const SHARED_STATE = new Set([
    'contextKey',
    'sharedContextKey',
    'getContext',
    'setContext',
    'deleteContext',
    'copyContext',
    'ContextKey',
    'wholeBodyOf',
    'headerFieldsOf',
    'restoreBody',
    'defineBodySlots',
    'handOnParsedJson',
    'takeParsedJson',
    'Principal',
    'principalOf',
    'setPrincipal',
    'principalKey',
    'clientAddressOf',
    'setClientAddress',
    'routeParamsOf',
    'setRouteParams',
  ])

  /** Named imports and re-exports from other @api-blocks packages: [file, line, name, package]. */
  function blockImports(file: string): [string, number, string, string][] {
    const source = ts.createSourceFile(file, readText(file), ts.ScriptTarget.Latest, false)
    const found: [string, number, string, string][] = []
    for (const statement of source.statements) {
      let specifier: ts.Expression | undefined
      let bindings: ts.NamedImportBindings | ts.NamedExportBindings | undefined
      if (ts.isImportDeclaration(statement)) {
        specifier = statement.moduleSpecifier
        bindings = statement.importClause?.namedBindings
      } else if (ts.isExportDeclaration(statement)) {
        specifier = statement.moduleSpecifier
        bindings = statement.exportClause
      } else continue
      if (specifier === undefined || !ts.isStringLiteral(specifier)) continue
      if (!specifier.text.startsWith('@api-blocks/')) continue
      const line = source.getLineAndCharacterOfPosition(statement.getStart(source)).line + 1
      const elements =
        bindings !== undefined && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))
          ? bindings.elements
          : []
      for (const element of elements) {
        found.push([file, line, (element.propertyName ?? element.name).text, specifier.text])
      }
      if (elements.length === 0) found.push([file, line, '*', specifier.text])
    }
    return found
  }

  // These two parse every source file of the packages (seconds under a loaded CI machine, and
  // more with each file added): above vitest's 5 s default, without anything hanging.
  test('blocks read shared request state from core, never through another block', () => {
    const through: string[] = []
    for (const file of packageFiles.filter((path) => !path.startsWith(CORE))) {
      for (const [path, line, name, specifier] of blockImports(file)) {
        if (SHARED_STATE.has(name) && !specifier.startsWith('@api-blocks/core')) {
          through.push(
            `${path}:${line}: ${name} from ${specifier} (import it from @api-blocks/core)`,
          )
        }
      }
    }
    expect(through).toEqual([])
  }, 30_000)

  test('a package that imports @api-blocks/core depends on it', () => {
    const missing = new Set<string>()
    for (const file of packageFiles.filter((path) => !path.startsWith(CORE))) {
      const manifest = JSON.parse(readText(`packages/${packageOf(file)}/package.json`)) as {
        name: string
        dependencies?: Record<string, string>
        devDependencies?: Record<string, string>
      }
      const declared = isTest(file)
        ? { ...manifest.dependencies, ...manifest.devDependencies }
        : { ...manifest.dependencies }
      if (
        blockImports(file).some(([, , , specifier]) => specifier.startsWith('@api-blocks/core')) &&
        declared['@api-blocks/core'] === undefined
      ) {
        missing.add(
          `${manifest.name}: ${file} imports @api-blocks/core, which package.json does not list`,
        )
      }
    }
    expect([...missing]).toEqual([])
  }, 30_000)
})

describe('published packages', () => {
  test('docs/architecture.md lists every package with the dependencies its package.json has', () => {
    const rows = new Map<string, string[]>()
    for (const line of readText('docs/architecture.md').split('\n')) {
      const row = /^\| `(@api-blocks\/[\w-]+)` \| \w+ \| ([^|]*) \|/.exec(line)
      if (row === null) continue
      rows.set(
        row[1]!,
        [...row[2]!.matchAll(/`([\w-]+)`/g)].map((match) => `@api-blocks/${match[1]}`),
      )
    }
    const differences: string[] = []
    for (const manifestPath of repositoryFiles().filter((file) =>
      /^packages\/[^/]+\/package\.json$/.test(file),
    )) {
      const manifest = JSON.parse(readText(manifestPath)) as {
        name: string
        private?: boolean
        dependencies?: Record<string, string>
      }
      if (manifest.private === true) continue
      const actual = Object.keys(manifest.dependencies ?? {})
        .filter((name) => name.startsWith('@api-blocks/'))
        .sort()
      const documented = rows.get(manifest.name)
      if (documented === undefined) differences.push(`${manifest.name}: not in the table`)
      else if (documented.sort().join(', ') !== actual.join(', ')) {
        differences.push(
          `${manifest.name}: the table says ${documented.join(', ') || 'none'}, package.json has ${actual.join(', ') || 'none'}`,
        )
      }
      rows.delete(manifest.name)
    }
    for (const name of rows.keys()) differences.push(`${name}: in the table, but no such package`)
    expect(differences).toEqual([])
  })

  test('every package.json names its repository, homepage and bugs', () => {
    const missing: string[] = []
    for (const dir of repositoryFiles().filter((file) =>
      /^packages\/[^/]+\/package\.json$/.test(file),
    )) {
      const manifest = JSON.parse(readText(dir)) as Record<string, unknown>
      if (manifest['private'] === true) continue
      for (const field of ['repository', 'homepage', 'bugs']) {
        if (manifest[field] === undefined) missing.push(`${dir}: "${field}" is missing`)
      }
      const repository = manifest['repository'] as { directory?: string } | undefined
      if (
        repository !== undefined &&
        repository.directory !== dir.slice(0, -'/package.json'.length)
      ) {
        missing.push(
          `${dir}: repository.directory should be "${dir.slice(0, -'/package.json'.length)}"`,
        )
      }
    }
    expect(missing).toEqual([])
  })
})
