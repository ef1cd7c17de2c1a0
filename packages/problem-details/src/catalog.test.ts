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

  test('every type is documented in docs/problems.md, with its slug and its code', () => {
    const doc = readFileSync(new URL('../../../docs/problems.md', import.meta.url), 'utf8')
    for (const [name, type] of entries) {
      expect(doc, name).toContain(`| \`${type.type.split(/[/#:]/).pop()}\` | \`${type.code}\` |`)
    }
  })
})

describe('the catalog extension schemas (no schema library)', () => {
  test('is() checks each named member and lets other members be', () => {
    const tooLarge = problems.payloadTooLarge.create({ max_bytes: 1024 })
    expect(problems.payloadTooLarge.is({ ...tooLarge, extra: true })).toBe(true)
    expect(problems.payloadTooLarge.is({ ...tooLarge, max_bytes: -1 })).toBe(false)
    expect(problems.payloadTooLarge.is({ ...tooLarge, max_bytes: 1.5 })).toBe(false)
    expect(problems.payloadTooLarge.is({ type: tooLarge.type })).toBe(false)
    const allowed = problems.methodNotAllowed.create({ allowed_methods: ['GET'] })
    expect(problems.methodNotAllowed.is({ ...allowed })).toBe(true)
    expect(problems.methodNotAllowed.is({ ...allowed, allowed_methods: [1] })).toBe(false)
    expect(problems.headerTooLarge.is({ type: 'header-too-large', header: 7 })).toBe(false)
  })

  test('the validation problem holds at most 100 { detail, pointer } entries', () => {
    const entry = { detail: 'x', pointer: '/a' }
    const base = { type: 'validation-failed' }
    expect(problems.validation.is({ ...base, errors: Array(100).fill(entry) })).toBe(true)
    expect(problems.validation.is({ ...base, errors: Array(101).fill(entry) })).toBe(false)
    expect(problems.validation.is({ ...base, errors: [{ detail: 'x' }] })).toBe(false)
    expect(problems.validation.is({ ...base, errors: 'x' })).toBe(false)
  })

  test('the registered quota-exceeded member keeps its hyphenated name', () => {
    const quota = problems.quotaExceeded.create({ 'violated-policies': ['burst'] })
    expect(problems.quotaExceeded.is({ ...quota })).toBe(true)
    expect(problems.quotaExceeded.is({ ...quota, 'violated-policies': 'burst' })).toBe(false)
  })
})
