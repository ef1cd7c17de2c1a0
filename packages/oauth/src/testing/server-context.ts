/**
 * What each group of server conformance cases receives from `runAuthorizationServerConformance`.
 *
 * @module
 */
import type { AuthorizationServerOptions } from '../options.ts'
import type { Harness } from './server-kit.ts'

/** Makes a server with the demo clients over a fresh store of the suite (cleaned up after the test). */
export type MakeServer = (overrides?: Partial<AuthorizationServerOptions>) => Promise<Harness>

/** What each group of server cases receives. */
export interface ServerSuiteContext {
  /** Registers one test; `makeServer` gives servers over fresh stores, cleaned up afterwards. */
  readonly it: (title: string, body: (makeServer: MakeServer) => Promise<void>) => void
}
