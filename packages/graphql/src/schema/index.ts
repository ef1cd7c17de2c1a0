// Public exports of this part of the package; src/index.ts re-exports them all.
export type { AuthorizeOptions } from './authz.ts'
export { authDirectivesSDL, authorizeSchema, requireScopes } from './authz.ts'
export {
  connectionTypeDefs,
  pageInfoTypeDefs,
  paginationError,
  resolveConnection,
} from './relay.ts'
