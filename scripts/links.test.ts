// The repository stands alone: every link in its Markdown resolves inside it, and no file points
// to anything beside it that a clone does not have. A failure lists every offending file and line.
//
// - Relative links (and images) must name a file or folder that exists, and a `#fragment` must
//   name a heading (GitHub's anchor for it) or an HTML id of the target Markdown file.
// - Links to this repository on GitHub (`https://github.com/api-blocks/api-blocks/blob/main/…`)
//   must name a path that exists, since package READMEs use them.
// - A package README is also shown on the registry's page, where a relative link that leaves the
//   package folder leads nowhere: such links must be absolute GitHub URLs.
// - No file, of any kind, may mention the planning documents or folders that lived beside the
//   repository while it was built; the project's own words are in docs/spec.md,
//   docs/architecture.md and CONTRIBUTING.md.
import { posix } from 'node:path'
import { describe, expect, test } from 'vitest'
import { anchors, exists, headingSlug, links, readText, repositoryFiles } from './repository.ts'

const REPOSITORY_URL = 'https://github.com/api-blocks/api-blocks'
const GITHUB_FILE = new RegExp(
  `^${REPOSITORY_URL.replaceAll('.', '\\.')}/(?:blob|tree)/main/([^#?]*)`,
)

// Changesets are release notes in the making, not pages anyone browses: their links are not
// checked (their text is, below).
const markdownFiles = repositoryFiles(['.changeset']).filter((file) => file.endsWith('.md'))
const anchorCache = new Map<string, Set<string>>()
const anchorsOf = (file: string): Set<string> => {
  let found = anchorCache.get(file)
  if (found === undefined) {
    found = anchors(readText(file))
    anchorCache.set(file, found)
  }
  return found
}

/** What is wrong with one link target of `file`, or undefined. */
function checkLink(file: string, target: string): string | undefined {
  if (target === '') return 'empty link target'
  const [pathPart = '', fragment] = target.split('#', 2) as [string, string | undefined]
  if (pathPart === '') {
    return fragment === undefined || anchorsOf(file).has(fragment)
      ? undefined
      : `no heading or id "${fragment}" in this file`
  }
  if (/^[a-z][a-z\d+.-]*:/i.test(target)) {
    const onGithub = GITHUB_FILE.exec(target)
    if (onGithub === null) return undefined // another site: not checked here
    return checkPath(decodeURIComponent(onGithub[1]!.replace(/\/$/, '')), fragment, target)
  }
  if (pathPart.startsWith('/'))
    return 'a root-relative link does not work outside GitHub: use a relative path'
  const resolved = posix.normalize(
    posix.join(posix.dirname(file), decodeURIComponent(pathPart.split('?')[0]!)),
  )
  if (resolved === '..' || resolved.startsWith('../')) return `leaves the repository (${resolved})`
  const packageReadme = /^packages\/([^/]+)\/README\.md$/.exec(file)
  if (packageReadme && !`${resolved}/`.startsWith(`packages/${packageReadme[1]}/`)) {
    return `leaves the package, which the registry page cannot follow: use ${REPOSITORY_URL}/blob/main/${resolved}${fragment === undefined ? '' : `#${fragment}`}`
  }
  return checkPath(resolved.replace(/\/$/, ''), fragment, target)
}

function checkPath(path: string, fragment: string | undefined, target: string): string | undefined {
  if (path !== '' && path !== '.' && !exists(path))
    return `${target}: no such file or folder (${path})`
  if (fragment !== undefined && path.endsWith('.md') && !anchorsOf(path).has(fragment)) {
    return `${target}: no heading or id "${fragment}" in ${path}`
  }
  return undefined
}

describe('Markdown links', () => {
  test('every link to a file of the repository resolves, anchors included', () => {
    const broken: string[] = []
    for (const file of markdownFiles) {
      for (const { line, target } of links(readText(file))) {
        const problem = checkLink(file, target)
        if (problem !== undefined && !problem.startsWith('leaves the package')) {
          broken.push(`${file}:${line}: (${target}) ${problem}`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  test('a package README links outside its package with absolute GitHub URLs', () => {
    const relative: string[] = []
    for (const file of markdownFiles.filter((path) => /^packages\/[^/]+\/README\.md$/.test(path))) {
      for (const { line, target } of links(readText(file))) {
        const problem = checkLink(file, target)
        if (problem?.startsWith('leaves the package'))
          relative.push(`${file}:${line}: (${target}) ${problem}`)
      }
    }
    expect(relative).toEqual([])
  })

  test('the checker finds what is broken', () => {
    expect(checkLink('docs/index.md', 'getting-started.md')).toBeUndefined()
    expect(checkLink('docs/index.md', 'no-such-page.md')).toMatch(/no such file/)
    expect(checkLink('README.md', 'docs/index.md#no-such-heading')).toMatch(/no heading/)
    expect(checkLink('README.md', '../elsewhere/file.md')).toMatch(/leaves the repository/)
    expect(checkLink('packages/core/README.md', '../../docs/index.md')).toMatch(
      /leaves the package.*blob\/main\/docs\/index\.md/,
    )
    expect(
      checkLink('packages/core/README.md', `${REPOSITORY_URL}/blob/main/docs/nothing.md`),
    ).toMatch(/no such file/)
    expect(checkLink('README.md', 'https://www.rfc-editor.org/rfc/rfc9457')).toBeUndefined()
  })

  test('anchors are the ones GitHub makes', () => {
    expect(headingSlug('Quick start (a fresh machine)')).toBe('quick-start-a-fresh-machine')
    expect(headingSlug('2.3 Resource-interface list envelope')).toBe(
      '23-resource-interface-list-envelope',
    )
    expect(headingSlug('Rate limits: `@api-blocks/rate-limit`')).toBe(
      'rate-limits-api-blocksrate-limit',
    )
    expect(headingSlug('[Links](x.md) and ünïcode')).toBe('links-and-ünïcode')
    expect([...anchors('# A\n## A\n```\n# not a heading\n```\n<a id="here"></a>')]).toEqual([
      'a',
      'a-1',
      'here',
    ])
    // A heading's code span counts as its text (GitHub's anchor keeps it).
    expect([...anchors('## The fast path (`lightweight: true`)')]).toEqual([
      'the-fast-path-lightweight-true',
    ])
    expect(
      links('[a](b.md) `[c](d.md)` ![e](f.png)\n[ref]: g.md').map((link) => link.target),
    ).toEqual(['b.md', 'f.png', 'g.md'])
  })
})

// Assembled from pieces, so that this file does not itself match what it looks for.
const PLANNING = ['SPEC', 'DESIGN', 'STYLE'].map((name) => `${name}\\.md`).join('|')
const OUTSIDE = new RegExp(`\\.\\./${'shared'}\\b|\\b(?:${PLANNING})\\b|\\b${'research'}/`, 'g')

describe('the repository stands alone', () => {
  test('no file mentions a path outside the repository', () => {
    const mentions: string[] = []
    for (const file of repositoryFiles()) {
      const text = readText(file)
      if (text.includes('\0')) continue // binary
      text.split('\n').forEach((line, index) => {
        for (const match of line.matchAll(OUTSIDE))
          mentions.push(`${file}:${index + 1}: ${match[0]}`)
      })
    }
    expect(mentions).toEqual([])
  })

  test('the pattern finds each kind of mention', () => {
    const sample = [
      `../${'shared'}/x`,
      `${'SPEC'}.md §4.3`,
      `${'DESIGN'}.md`,
      `${'research'}/http.md`,
    ]
    expect(sample.map((text) => text.match(OUTSIDE)?.length ?? 0)).toEqual([1, 1, 1, 1])
    expect('docs/spec.md §4.3'.match(OUTSIDE)).toBeNull()
  })
})
