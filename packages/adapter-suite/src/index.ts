/**
 * The behaviour suite every api-blocks adapter passes on its real framework (private, not
 * published). Each adapter's tests call {@link runAdapterSuite} with a function that starts
 * the framework on port 0.
 *
 * @example
 * ```ts
 * import { runAdapterSuite } from '@api-blocks/adapter-suite'
 * runAdapterSuite('express', startExpress)
 * ```
 *
 * @module
 */

export type { Disconnect, Gate, SuiteState } from './handler.ts'
export { BODY_LIMIT_BYTES, gate, suiteHandler } from './handler.ts'
export type { AdapterRule } from './rules.ts'
export { adapterRules, ruleTitle } from './rules.ts'
export type { AdapterSuiteOptions, StartedServer, StartServer } from './suite.ts'
export { runAdapterSuite } from './suite.ts'
