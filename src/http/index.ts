export { bearerToken, digest, matchesDigest, matchingDigestIndex } from './bearer-token.js';
export {
  allowedHostNames,
  type HostPolicy,
  type HostPolicyOptions,
  hostNameOf,
  hostPolicy,
  originOf,
  refusedHeader,
} from './host-policy.js';
