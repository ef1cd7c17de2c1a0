// A vitest reporter that says, after the summary, which tests were skipped and why. The default
// reporter only counts them ("95 skipped"); the reason is in the names (house rule: a skipped
// test says why in its name, as in "RedisIdempotencyStore on Redis (skipped: REDIS_URL not
// set)"), so this prints each group of skipped tests once, by file and the outermost name that
// was skipped, with the count. A group whose name gives no reason is marked so.
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node'

/** Words that show a name says why the test is skipped. */
const REASON = /\b(skip|skipped|skips|without|not set|needs|requires|only on|unless)\b/i

/** The line printed for one group of skipped tests (exported for its test). */
export function describeSkipped(group: {
  where: string
  name: string
  count: number
  note?: string
}): string {
  const reason =
    group.note !== undefined
      ? ` (${group.note})`
      : REASON.test(group.name)
        ? ''
        : ' (no reason given in its name)'
  return `  ${group.where} > ${group.name}${reason}: ${group.count} ${group.count === 1 ? 'test' : 'tests'}`
}

/** The outermost suite (or the test itself) that was skipped as a whole. */
function skippedRoot(test: TestCase): string {
  let name = test.name
  let parent = test.parent
  while (parent.type === 'suite') {
    name = parent.name
    parent = parent.parent
  }
  return name
}

export default class SkipReporter implements Reporter {
  #vitest: Vitest | undefined

  onInit(vitest: Vitest): void {
    this.#vitest = vitest
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const groups = new Map<string, { where: string; name: string; count: number; note?: string }>()
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result()
        if (result.state !== 'skipped') continue
        const where = `${module.project.name} ${module.relativeModuleId}`
        const name = result.note === undefined ? skippedRoot(test) : test.fullName
        const key = `${where}\0${name}`
        const group = groups.get(key) ?? {
          where,
          name,
          count: 0,
          ...(result.note === undefined ? {} : { note: result.note }),
        }
        group.count++
        groups.set(key, group)
      }
    }
    if (groups.size === 0) return
    const total = [...groups.values()].reduce((sum, group) => sum + group.count, 0)
    const log = (line: string) => (this.#vitest ? this.#vitest.logger.log(line) : console.log(line))
    log(`\nSkipped tests (${total}), and why:`)
    for (const group of groups.values()) log(describeSkipped(group))
  }
}
