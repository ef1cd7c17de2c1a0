import type { Handler } from '@api-blocks/core'
import { describe, expectTypeOf, test } from 'vitest'
import type { AdapterRule, AdapterSuiteOptions, StartedServer, StartServer } from './index.ts'
import { adapterRules, runAdapterSuite } from './index.ts'

describe('public types of @api-blocks/adapter-suite', () => {
  test('a server starter takes the suite handler and answers where it listens', () => {
    expectTypeOf<StartServer>().parameter(0).toEqualTypeOf<Handler>()
    expectTypeOf<StartServer>().returns.toEqualTypeOf<Promise<StartedServer>>()
    expectTypeOf(runAdapterSuite).parameter(2).toEqualTypeOf<AdapterSuiteOptions | undefined>()
    // @ts-expect-error: start resolves to { url, close }
    runAdapterSuite('x', async () => 'http://127.0.0.1:1')
  })

  test('a rule takes a level of MUST or SHOULD only', () => {
    // @ts-expect-error: MAY is not a level the suite knows
    const rule: AdapterRule = { ...adapterRules[0]!, level: 'MAY' }
    void rule
  })
})
