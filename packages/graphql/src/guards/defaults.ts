import type { GuardOptions } from './options.ts'

/**
 * The defaults of every guard limit and cost option. The limits let real applications and the
 * standard introspection query of graphql-js 16 and 17 (15 levels deep) pass; the cost options
 * are those of the IBM GraphQL Cost Directives (list size 10) and of Apollo Router and Shopify
 * (a mutation costs 10; pages of at most 100, as GitHub).
 *
 * @example
 * ```ts
 * const options: GuardOptions = { ...DEFAULT_GUARD_OPTIONS, maxDepth: 12 }
 * ```
 */
export const DEFAULT_GUARD_OPTIONS: Readonly<Required<Omit<GuardOptions, 'estimators'>>> =
  Object.freeze({
    maxDepth: 20,
    maxAliases: 30,
    maxDirectives: 50,
    maxTokens: 10_000,
    maxNodes: 10_000,
    maxCost: 1_000,
    maxFieldRepeats: 30,
    defaultListSize: 10,
    maxPageSize: 100,
    mutationCost: 10,
    relayConnections: true,
  })
