/**
 * OAuth 2.0 bearer tokens for resource servers.
 *
 * @module
 */
export {}
