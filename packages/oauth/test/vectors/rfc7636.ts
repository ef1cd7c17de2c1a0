// The vector lives with the server conformance suite of the testing subpath, which runs it on every store.
export { RFC7636_APPENDIX_B } from '../../src/testing/vectors/rfc7636.ts'
