import { expect, test } from 'vitest'
import { describeSkipped } from './skip-reporter.ts'

test('a skipped group is printed with its reason, or marked when its name gives none', () => {
  expect(
    describeSkipped({
      where: 'redis src/idempotency-store.test.ts',
      name: 'RedisIdempotencyStore on Redis (skipped: REDIS_URL not set)',
      count: 33,
    }),
  ).toBe(
    '  redis src/idempotency-store.test.ts > RedisIdempotencyStore on Redis (skipped: REDIS_URL not set): 33 tests',
  )
  expect(describeSkipped({ where: 'http src/a.test.ts', name: 'compresses', count: 1 })).toBe(
    '  http src/a.test.ts > compresses (no reason given in its name): 1 test',
  )
  expect(
    describeSkipped({
      where: 'http src/a.test.ts',
      name: 'a > b',
      count: 1,
      note: 'no zstd in this Node',
    }),
  ).toBe('  http src/a.test.ts > a > b (no zstd in this Node): 1 test')
})
