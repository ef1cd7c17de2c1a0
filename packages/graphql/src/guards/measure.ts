/**
 * The static measures of an operation (depth, aliases, directives, nodes) in one walk over the
 * selection sets, each named fragment measured once and memoised, with an explicit stack: the
 * walk is linear in the document and never recurses, whatever its nesting (5,000 levels), its
 * fragment cycles (a spread of a fragment already being measured counts nothing: validation
 * rejects the cycle, GraphQL spec §5.5.2.2) or its fan-out (a fragment spread 3 times counts
 * 3 times through its memo: the counts are floats, so doubling fragments give their true,
 * astronomic totals without expanding anything).
 *
 * Repeats: the most selections sharing one response name in one merged selection set (a
 * field's selection set with its inline fragments and the fragments it spreads merged in,
 * GraphQL spec §5.3.2 FieldsInSetCanMerge), a fragment contributing its top-level response
 * names with multiplicity: graphql-js's OverlappingFieldsCanBeMerged compares those pairwise,
 * so its time grows with their square. Merging a fragment's names into a spreading set costs one
 * step per name, each an expanded field selection: past `budget` steps the operation has more
 * nodes than that, is refused for it, and the repeats stop counting (a lower bound then).
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
  /** The most selections sharing one response name in one merged selection set. */
  repeats: number
  /** That response name (empty when there is no field). */
  repeated: string
}

/** A fragment's measures and its top-level response names with their counts. @internal */
export interface FragmentMeasures extends Measures {
  readonly names: ReadonlyMap<string, number>
}

interface Frame extends Measures {
  readonly selections: readonly SelectionNode[]
  index: number
  /** A field's selection set: its depth counts one more in the parent. */
  readonly field: boolean
  /** The body of this fragment: memoised when done. */
  readonly fragment: string | undefined
  /** Response name counts of the merged set: an inline fragment shares its parent's. */
  readonly names: Map<string, number>
}

function frame(
  selections: readonly SelectionNode[],
  field: boolean,
  fragment: string | undefined,
  directives: number,
  names: Map<string, number>,
): Frame {
  return {
    selections,
    index: 0,
    field,
    fragment,
    names,
    depth: 0,
    aliases: 0,
    directives,
    nodes: 0,
    repeats: 0,
    repeated: '',
  }
}

/**
 * Measures `operation`; `memo` holds the fragments already measured (shared by the operations
 * of one document, a fragment's measures not depending on where it is spread).
 */
export function measureOperation(
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  memo: Map<string, FragmentMeasures>,
  budget: number,
): Measures {
  let directives = operation.directives?.length ?? 0
  for (const variable of operation.variableDefinitions ?? [])
    directives += variable.directives?.length ?? 0
  const stack: Frame[] = [
    frame(operation.selectionSet.selections, false, undefined, directives, new Map()),
  ]
  const active = new Set<string>()
  // Fragments memoised by this walk, forgotten if the budget runs out (their names are partial).
  const created: string[] = []
  let steps = 0
  const merge = (into: Frame, names: ReadonlyMap<string, number>): void => {
    steps += names.size
    if (steps > budget) return
    for (const [name, count] of names) countName(into, name, count)
  }
  for (;;) {
    const top = stack[stack.length - 1] as Frame
    const selection = top.selections[top.index++]
    if (selection !== undefined) {
      top.directives += selection.directives?.length ?? 0
      if (selection.kind === Kind.FIELD) {
        top.nodes++
        if (selection.alias !== undefined) top.aliases++
        countName(top, selection.alias?.value ?? selection.name.value, 1)
        if (selection.selectionSet !== undefined)
          stack.push(frame(selection.selectionSet.selections, true, undefined, 0, new Map()))
        else if (top.depth < 1) top.depth = 1
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        stack.push(frame(selection.selectionSet.selections, false, undefined, 0, top.names))
      } else {
        const name = selection.name.value
        const known = memo.get(name)
        if (known !== undefined) {
          add(top, known, 0)
          merge(top, known.names)
        } else if (!active.has(name)) {
          const definition = fragments.get(name)
          if (definition !== undefined) {
            active.add(name)
            stack.push(
              frame(
                definition.selectionSet.selections,
                false,
                name,
                definition.directives?.length ?? 0,
                new Map(),
              ),
            )
          }
        }
      }
      continue
    }
    stack.pop()
    const parent = stack[stack.length - 1]
    if (top.fragment !== undefined) {
      const { depth, aliases, directives, nodes, repeats, repeated, names } = top
      memo.set(top.fragment, { depth, aliases, directives, nodes, repeats, repeated, names })
      created.push(top.fragment)
      active.delete(top.fragment)
      if (parent !== undefined) merge(parent, names)
    }
    if (parent === undefined) {
      if (steps > budget) for (const name of created) memo.delete(name)
      return top
    }
    add(parent, top, top.field ? 1 : 0)
  }
}

/** Counts `count` more selections of the response name `name` in the merged set of `into`. */
function countName(into: Frame, name: string, count: number): void {
  const total = (into.names.get(name) ?? 0) + count
  into.names.set(name, total)
  if (total > into.repeats) {
    into.repeats = total
    into.repeated = name
  }
}

function add(into: Measures, from: Measures, depth: number): void {
  if (from.depth + depth > into.depth) into.depth = from.depth + depth
  into.aliases += from.aliases
  into.directives += from.directives
  into.nodes += from.nodes
  if (from.repeats > into.repeats) {
    into.repeats = from.repeats
    into.repeated = from.repeated
  }
}
