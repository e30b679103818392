// netguard: every model-supplied URL passes here. Pure pieces (address, url, vet) and the one
// place that opens connections for them (fetch, through pinned-agent, which it loads with the
// first fetch: undici is not on the way to polling).
export { type AddressVerdict, addressVerdict } from './address.ts';
export {
  clip,
  DEFAULT_FETCH_LIMITS,
  type FetchLimits,
  type FetchOutcome,
  formatDuration,
  type GuardedFetchOptions,
  guardedFetch,
  MAX_REDIRECTS,
} from './fetch.ts';
export { type Resolver, staticResolver, systemResolver } from './resolve.ts';
export { hostKey, parseTarget, redactedHref, type Target } from './url.ts';
export { type VetOptions, type VetResult, vetTarget, vetUrl } from './vet.ts';
