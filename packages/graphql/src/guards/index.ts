// Public exports of this part of the package; src/index.ts re-exports them all.
export { parseDocument } from '../parse.ts'
export { analyzeDocument } from './analyze.ts'
export { DEFAULT_GUARD_OPTIONS } from './defaults.ts'
export type { ListSizeExtension } from './directives.ts'
export { costDirectivesSDL } from './directives.ts'
