import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { problems } from './catalog.ts'

const entries = Object.entries(problems)

describe('the default catalog', () => {
  test('slugs are unique and lowercase-hyphenated; codes are their UPPER_SNAKE_CASE', () => {
    const codes = entries.map(([, type]) => type.code)
    expect(new Set(codes).size).toBe(codes.length)
    for (const [, type] of entries) {
      const slug = type.type.split(/[/#:]/).pop() ?? ''
      expect(slug).toMatch(/^[a-z]+(-[a-z]+)*$/)
      expect(type.code).toBe(slug.toUpperCase().replaceAll('-', '_'))
    }
  })

  test('every type has a German and a French title', () => {
    for (const [, type] of entries) {
      expect(Object.keys(type.titles).sort()).toEqual(['de', 'fr'])
    }
  })

  test('every type is documented in docs/problems.md', () => {
    const doc = readFileSync(new URL('../../../docs/problems.md', import.meta.url), 'utf8')
    for (const [name, type] of entries) {
      expect(doc, name).toContain(`\`${type.type.split(/[/#:]/).pop()}\``)
    }
  })
})
