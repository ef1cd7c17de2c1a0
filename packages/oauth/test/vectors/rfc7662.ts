// The vector lives with the server conformance suite of the testing subpath, which runs it on every store.
export { RFC7662_EXAMPLE } from '../../src/testing/vectors/rfc7662.ts'
