/**
 * The static measures of an operation (depth, aliases, directives, nodes) in one walk over the
 * selection sets, each named fragment measured once and memoised, with an explicit stack: the
 * walk is linear in the document and never recurses, whatever its nesting (5,000 levels), its
 * fragment cycles (a spread of a fragment already being measured counts nothing: validation
 * rejects the cycle, GraphQL spec §5.5.2.2) or its fan-out (a fragment spread 3 times counts
 * 3 times through its memo: the counts are floats, so doubling fragments give their true,
 * astronomic totals without expanding anything).
 *
 * @module
 */
import {
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionNode,
} from 'graphql'

/** What one operation or fragment measures, fragments expanded. @internal */
export interface Measures {
  depth: number
  aliases: number
  directives: number
  nodes: number
}

interface Frame extends Measures {
  readonly selections: readonly SelectionNode[]
  index: number
  /** A field's selection set: its depth counts one more in the parent. */
  readonly field: boolean
  /** The body of this fragment: memoised when done. */
  readonly fragment: string | undefined
}

function frame(
  selections: readonly SelectionNode[],
  field: boolean,
  fragment: string | undefined,
  directives: number,
): Frame {
  return { selections, index: 0, field, fragment, depth: 0, aliases: 0, directives, nodes: 0 }
}

/**
 * Measures `operation`; `memo` holds the fragments already measured (shared by the operations
 * of one document, a fragment's measures not depending on where it is spread).
 */
export function measureOperation(
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  memo: Map<string, Measures>,
): Measures {
  let directives = operation.directives?.length ?? 0
  for (const variable of operation.variableDefinitions ?? [])
    directives += variable.directives?.length ?? 0
  const stack: Frame[] = [frame(operation.selectionSet.selections, false, undefined, directives)]
  const active = new Set<string>()
  for (;;) {
    const top = stack[stack.length - 1] as Frame
    const selection = top.selections[top.index++]
    if (selection !== undefined) {
      top.directives += selection.directives?.length ?? 0
      if (selection.kind === Kind.FIELD) {
        top.nodes++
        if (selection.alias !== undefined) top.aliases++
        if (selection.selectionSet !== undefined)
          stack.push(frame(selection.selectionSet.selections, true, undefined, 0))
        else if (top.depth < 1) top.depth = 1
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        stack.push(frame(selection.selectionSet.selections, false, undefined, 0))
      } else {
        const name = selection.name.value
        const known = memo.get(name)
        if (known !== undefined) add(top, known, 0)
        else if (!active.has(name)) {
          const definition = fragments.get(name)
          if (definition !== undefined) {
            active.add(name)
            stack.push(
              frame(
                definition.selectionSet.selections,
                false,
                name,
                definition.directives?.length ?? 0,
              ),
            )
          }
        }
      }
      continue
    }
    stack.pop()
    if (top.fragment !== undefined) {
      memo.set(top.fragment, {
        depth: top.depth,
        aliases: top.aliases,
        directives: top.directives,
        nodes: top.nodes,
      })
      active.delete(top.fragment)
    }
    const parent = stack[stack.length - 1]
    if (parent === undefined) return top
    add(parent, top, top.field ? 1 : 0)
  }
}

function add(into: Measures, from: Measures, depth: number): void {
  if (from.depth + depth > into.depth) into.depth = from.depth + depth
  into.aliases += from.aliases
  into.directives += from.directives
  into.nodes += from.nodes
}
