/**
 * The static measures of an operation (depth, aliases, directives, nodes) in one walk over the
 * selection sets, each named fragment measured once and memoised, with an explicit stack: the
 * walk is linear in the document and never recurses, whatever its nesting (5,000 levels), its
 * fragment cycles (a spread of a fragment already being measured counts nothing: validation
 * rejects the cycle, GraphQL spec §5.5.2.2) or its fan-out (a fragment spread 3 times counts
 * 3 times through its memo: the counts are floats, so doubling fragments give their true,
 * astronomic totals without expanding anything).
 *
 * Repeats: the most selections sharing one response path (a field's selection set with its
 * inline fragments and the fragments it spreads merged in, and merged with the sets of the
 * other fields of the same response name: GraphQL spec §5.3.2 FieldsInSetCanMerge), fragments
 * contributing their relative paths with multiplicity: graphql-js's OverlappingFieldsCanBeMerged
 * compares those pairwise, so its time grows with their square. Merging a fragment's paths into
 * a spreading set costs one step per path, each an expanded field selection: past `budget` steps
 * the operation has more nodes than that, is refused for it, and the repeats stop counting (a
 * lower bound then). They stop too once the walk has met more aliases than `aliasBudget`: the
 * operation is refused for them, and looking up the path of every one of 10,000 aliases would
 * cost ten times the rest of the pass (`npm run bench -- graphql`, 10,000 aliases).
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
  /** The most selections sharing one response path (sets of same-named fields merged). */
  repeats: number
  /** That response name (empty when there is no field). */
  repeated: string
}

/**
 * A fragment's measures and its response paths relative to it (a tree in creation order:
 * `parents[i]` is the index of path i's parent, -1 for the fragment's top level), each with its
 * count of selections. @internal
 */
export interface FragmentMeasures extends Measures {
  readonly parents: readonly number[]
  readonly names: readonly string[]
  readonly counts: readonly number[]
}

interface Frame extends Measures {
  readonly selections: readonly SelectionNode[]
  index: number
  /** A field's selection set: its depth counts one more in the parent. */
  readonly field: boolean
  /** The body of this fragment: memoised when done. */
  readonly fragment: string | undefined
  /** The response path of the merged set (an id): an inline fragment has its parent's. */
  readonly path: number
  /** The fragment frame whose relative paths this one adds to (undefined: itself or the operation). */
  readonly owner: Frame | undefined
  /** For a fragment frame: the ids of the paths relative to it, in creation order. */
  readonly paths: number[]
}

function frame(
  selections: readonly SelectionNode[],
  field: boolean,
  fragment: string | undefined,
  directives: number,
  path: number,
  owner: Frame | undefined,
): Frame {
  return {
    selections,
    index: 0,
    field,
    fragment,
    path,
    owner,
    paths: [],
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
  aliasBudget: number = Number.POSITIVE_INFINITY,
): Measures {
  let directives = operation.directives?.length ?? 0
  for (const variable of operation.variableDefinitions ?? [])
    directives += variable.directives?.length ?? 0
  // Response paths: GraphQL spec §5.3.2 merges the sub-selections of fields sharing a response
  // name, so graphql-js compares all selections of one path, across parent fields, pairwise.
  const children: (Map<string, number> | undefined)[] = [undefined]
  const parents: number[] = [-1]
  const names: string[] = ['']
  const counts: number[] = [0]
  const fresh = (parent: number, name: string): number => {
    parents.push(parent)
    names.push(name)
    counts.push(0)
    children.push(undefined)
    return counts.length - 1
  }
  const path = (parent: number, name: string, owner: Frame | undefined): number => {
    let named = children[parent]
    if (named === undefined) {
      named = new Map()
      children[parent] = named
    }
    let id = named.get(name)
    if (id === undefined) {
      id = fresh(parent, name)
      named.set(name, id)
      owner?.paths.push(id)
    }
    return id
  }
  const count = (into: Frame, id: number, added: number): void => {
    const total = (counts[id] as number) + added
    counts[id] = total
    if (total > into.repeats) {
      into.repeats = total
      into.repeated = names[id] as string
    }
  }
  const stack: Frame[] = [
    frame(operation.selectionSet.selections, false, undefined, directives, 0, undefined),
  ]
  const active = new Set<string>()
  // Fragments memoised by this walk, forgotten if the budget runs out (their paths are partial).
  const created: string[] = []
  let steps = 0
  // Aliases met so far, with multiplicity: past `aliasBudget` the operation is refused whatever
  // its repeats, which then stop counting (steps past the budget).
  let aliased = 0
  const met = (aliases: number): void => {
    aliased += aliases
    if (aliased > aliasBudget) steps = budget + 1
  }
  const merge = (into: Frame, known: FragmentMeasures): void => {
    steps += known.counts.length
    if (steps > budget) return
    const absolute: number[] = []
    for (let i = 0; i < known.counts.length; i++) {
      const parent = known.parents[i] as number
      const id = path(
        parent < 0 ? into.path : (absolute[parent] as number),
        known.names[i] as string,
        ownerOf(into),
      )
      absolute.push(id)
      count(into, id, known.counts[i] as number)
    }
  }
  for (;;) {
    const top = stack[stack.length - 1] as Frame
    const selection = top.selections[top.index++]
    if (selection !== undefined) {
      top.directives += selection.directives?.length ?? 0
      if (selection.kind === Kind.FIELD) {
        top.nodes++
        if (selection.alias !== undefined) top.aliases++
        if (selection.alias !== undefined) met(1)
        // Past the budgets the paths no longer matter: every field counts under the root path.
        let id = 0
        if (steps <= budget) {
          id = path(top.path, selection.alias?.value ?? selection.name.value, ownerOf(top))
          count(top, id, 1)
        }
        if (selection.selectionSet !== undefined)
          stack.push(frame(selection.selectionSet.selections, true, undefined, 0, id, ownerOf(top)))
        else if (top.depth < 1) top.depth = 1
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        stack.push(
          frame(selection.selectionSet.selections, false, undefined, 0, top.path, ownerOf(top)),
        )
      } else {
        const name = selection.name.value
        const known = memo.get(name)
        if (known !== undefined) {
          add(top, known, 0)
          met(known.aliases)
          merge(top, known)
        } else if (!active.has(name)) {
          const definition = fragments.get(name)
          if (definition !== undefined) {
            active.add(name)
            const fragmentFrame = frame(
              definition.selectionSet.selections,
              false,
              name,
              definition.directives?.length ?? 0,
              fresh(-1, ''),
              undefined,
            )
            stack.push(fragmentFrame)
          }
        }
      }
      continue
    }
    stack.pop()
    const parent = stack[stack.length - 1]
    if (top.fragment !== undefined) {
      const index = new Map<number, number>()
      const relative = { parents: [] as number[], names: [] as string[], counts: [] as number[] }
      for (const id of top.paths) {
        index.set(id, relative.counts.length)
        relative.parents.push(index.get(parents[id] as number) ?? -1)
        relative.names.push(names[id] as string)
        relative.counts.push(counts[id] as number)
      }
      const { depth, aliases, directives, nodes, repeats, repeated } = top
      const measures = { depth, aliases, directives, nodes, repeats, repeated, ...relative }
      memo.set(top.fragment, measures)
      created.push(top.fragment)
      active.delete(top.fragment)
      if (parent !== undefined) merge(parent, measures)
    }
    if (parent === undefined) {
      if (steps > budget) for (const name of created) memo.delete(name)
      return top
    }
    add(parent, top, top.field ? 1 : 0)
  }
}

/** The fragment frame that `frame` adds paths to: itself, the one it is in, or none (the operation). */
function ownerOf(frame: Frame): Frame | undefined {
  return frame.fragment !== undefined ? frame : frame.owner
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
