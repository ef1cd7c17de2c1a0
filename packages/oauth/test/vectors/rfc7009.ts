// The vector lives with the server conformance suite of the testing subpath, which runs it on every store.
export { RFC7009_EXAMPLE } from '../../src/testing/vectors/rfc7009.ts'
