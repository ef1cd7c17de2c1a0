// Translated titles ride on a problem object under a symbol that is not enumerable, so they
// never reach the wire (JSON.stringify and spreads skip it) but survive until serialisation.
// The symbol is this copy's own: with two installed copies of the package, a problem made by
// one and serialised by the other answers its untranslated title.
import type { ProblemDetails } from '@api-blocks/core'

const TITLES: unique symbol = Symbol('api-blocks.problem-titles') as never

export function attachTitles<T extends object>(
  problem: T,
  titles: Readonly<Record<string, string>>,
): T {
  if (Object.keys(titles).length > 0) {
    Object.defineProperty(problem, TITLES, { value: titles, enumerable: false })
  }
  return problem
}

export function titlesOf(problem: ProblemDetails): Readonly<Record<string, string>> | undefined {
  return (problem as { [TITLES]?: Readonly<Record<string, string>> })[TITLES]
}
