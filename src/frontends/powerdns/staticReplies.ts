/** Names kept per snapshot; a flood of distinct names clears the map rather than growing it. */
const MAX_NAMES = 8192;

const bySnapshot = new WeakMap<object, Map<string, Map<number, string>>>();

/**
 * Replies to `ANY` lookups that depend only on the snapshot, the qname as sent and the zone id:
 * names without GSLB records and names that do not exist. PowerDNS asks for the same few such
 * names around almost every query (the zone's SOA, referral checks, NS and MX targets), so their
 * reply text is built once per snapshot. A reload or a state change publishes a new snapshot and
 * so starts afresh. Returns the replies of `qname` by zone id, for the caller to read and fill.
 */
export function staticRepliesOf(snapshot: object, qname: string): Map<number, string> {
  let names = bySnapshot.get(snapshot);
  if (!names) {
    names = new Map();
    bySnapshot.set(snapshot, names);
  }
  let replies = names.get(qname);
  if (!replies) {
    if (names.size >= MAX_NAMES) names.clear();
    replies = new Map();
    names.set(qname, replies);
  }
  return replies;
}
