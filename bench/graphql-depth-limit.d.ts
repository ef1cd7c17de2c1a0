// The little of graphql-depth-limit 1.1.0 (which ships no types; @types/graphql-depth-limit pulls
// graphql 14) that the graphql suite uses: a validation rule factory.
declare module 'graphql-depth-limit' {
  import type { ValidationRule } from 'graphql'

  export default function depthLimit(
    maxDepth: number,
    options?: { ignore?: ReadonlyArray<string | RegExp | ((name: string) => boolean)> },
    callback?: (depths: Record<string, number>) => void,
  ): ValidationRule
}
