// What the repository checks under scripts/ share: the repository's files, and a small reader of
// Markdown (code blocks, links, heading anchors) that knows just enough to check links and
// extract examples. It is not a Markdown parser: it follows the CommonMark rules that matter
// here (fenced code blocks, code spans, inline links, reference definitions) and GitHub's
// heading anchors.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'

/** The repository root (this file lives in scripts/). */
export const root: string = resolve(import.meta.dirname, '..')

/** Folders that are never part of the repository's own text: installs, builds, scratch space. */
const IGNORED = new Set(['node_modules', 'dist', '.git', '.tmp', 'coverage'])

/**
 * Every file of the repository, as paths relative to the root with `/` separators, sorted.
 * `skip` names further folders to leave out (matched by name at any depth).
 */
export function repositoryFiles(skip: readonly string[] = []): string[] {
  const skipped = new Set([...IGNORED, ...skip])
  const files: string[] = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (skipped.has(entry.name)) continue
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) files.push(relative(root, path).split(sep).join('/'))
    }
  }
  walk(root)
  return files.sort()
}

/** Reads a repository file (path relative to the root). */
export function readText(path: string): string {
  return readFileSync(join(root, path), 'utf8')
}

/** Whether a path relative to the root exists (a file or a folder). */
export function exists(path: string): boolean {
  try {
    statSync(join(root, path))
    return true
  } catch {
    return false
  }
}

/** A fenced code block: its info string's first word, its text, the line of the opening fence. */
export interface CodeBlock {
  readonly lang: string
  readonly code: string
  /** 1-based line of the opening fence; the code's first line is `line + 1`. */
  readonly line: number
  /** The nearest non-blank line above the fence, trimmed ('' when none). */
  readonly before: string
}

// Fences inside list items are indented, so any indentation opens one.
const FENCE = /^\s*(`{3,}|~{3,})\s*([^`\s]*)?.*$/

/** The fenced code blocks of a Markdown text, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n')
  const blocks: CodeBlock[] = []
  let open: { fence: string; lang: string; line: number; before: string; body: string[] } | null =
    null
  let before = ''
  lines.forEach((text, index) => {
    if (open === null) {
      const match = FENCE.exec(text)
      if (match) {
        open = { fence: match[1]!, lang: match[2] ?? '', line: index + 1, before, body: [] }
      } else if (text.trim() !== '') {
        before = text.trim()
      }
      return
    }
    const close = text.trim()
    if (close.startsWith(open.fence[0]!.repeat(open.fence.length)) && /^(`+|~+)$/.test(close)) {
      blocks.push({
        lang: open.lang,
        code: open.body.join('\n'),
        line: open.line,
        before: open.before,
      })
      open = null
      before = ''
      return
    }
    open.body.push(text)
  })
  return blocks
}

/**
 * The lines of a Markdown text outside fenced code blocks, with code spans blanked out (so
 * that links shown as code are not taken for links). Line numbers stay as they were.
 */
export function proseLines(markdown: string): { line: number; text: string; raw: string }[] {
  const lines = markdown.split('\n')
  const prose: { line: number; text: string; raw: string }[] = []
  let fence: string | null = null
  lines.forEach((text, index) => {
    const match = FENCE.exec(text)
    if (fence === null && match) {
      fence = match[1]!
      return
    }
    if (fence !== null) {
      const close = text.trim()
      if (close.startsWith(fence[0]!.repeat(fence.length)) && /^(`+|~+)$/.test(close)) fence = null
      return
    }
    prose.push({
      line: index + 1,
      raw: text,
      text: text.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (span) => ' '.repeat(span.length)),
    })
  })
  return prose
}

/** A link target found in Markdown prose. */
export interface Link {
  readonly line: number
  readonly target: string
}

const INLINE_LINK =
  /!?\[(?:[^\][]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/
const HTML_LINK = /<(?:a|img)\s[^>]*?(?:href|src)\s*=\s*"([^"]*)"/g

/** Every link target of a Markdown text: inline links and images, reference definitions, HTML. */
export function links(markdown: string): Link[] {
  const found: Link[] = []
  for (const { line, text } of proseLines(markdown)) {
    for (const match of text.matchAll(INLINE_LINK)) {
      found.push({ line, target: match[1]!.replace(/^<|>$/g, '') })
    }
    const definition = REFERENCE_DEFINITION.exec(text)
    if (definition) found.push({ line, target: definition[1]!.replace(/^<|>$/g, '') })
    for (const match of text.matchAll(HTML_LINK)) found.push({ line, target: match[1]! })
  }
  return found
}

/**
 * The anchor GitHub gives a heading: the rendered text lower-cased, every character that is
 * not a letter, a digit, `-`, `_` or a space removed, spaces turned into `-`.
 */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .replace(/<[^>]+>/g, '') // inline HTML shows nothing of its tags
    .replace(/`/g, '')
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors a Markdown text defines: its headings (numbered as GitHub numbers repeats) and HTML ids. */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>()
  const seen = new Map<string, number>()
  for (const { text, raw } of proseLines(markdown)) {
    // A heading's anchor comes from its text as written, code spans included.
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw)
    if (heading) {
      const slug = headingSlug(heading[1]!)
      const count = seen.get(slug) ?? 0
      seen.set(slug, count + 1)
      found.add(count === 0 ? slug : `${slug}-${count}`)
    }
    for (const match of text.matchAll(/<a\s[^>]*?(?:id|name)\s*=\s*"([^"]+)"/g))
      found.add(match[1]!)
  }
  return found
}

/** The published packages: folders under packages/ whose package.json is not private. */
export function publishedPackages(): { dir: string; name: string }[] {
  return readdirSync(join(root, 'packages'))
    .filter((dir) => exists(`packages/${dir}/package.json`))
    .map((dir) => ({ dir, manifest: JSON.parse(readText(`packages/${dir}/package.json`)) }))
    .filter(({ manifest }) => manifest.private !== true)
    .map(({ dir, manifest }) => ({ dir, name: manifest.name as string }))
}
