import { WILDCARD, type Qualifiers } from './location.js';

/**
 * True when a client location matches a dotted pattern: every non-wildcard qualifier of the
 * pattern equals the client's (normalised) one, so an unknown client field (`''`) matches only `*`.
 */
export function locationMatches(pattern: Qualifiers, client: Qualifiers): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p !== WILDCARD && p !== client[i]) return false;
  }
  return true;
}
