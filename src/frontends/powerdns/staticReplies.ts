/** Names (and request lines) kept per snapshot; a flood of distinct ones clears the map rather than growing it. */
const MAX_NAMES = 8192;

interface SnapshotReplies {
  readonly names: Map<string, Map<number, string>>;
  readonly lines: Map<string, string>;
}

const bySnapshot = new WeakMap<object, SnapshotReplies>();

function repliesOf(snapshot: object): SnapshotReplies {
  let r = bySnapshot.get(snapshot);
  if (!r) {
    r = { names: new Map(), lines: new Map() };
    bySnapshot.set(snapshot, r);
  }
  return r;
}

/**
 * Replies to `ANY` lookups that depend only on the snapshot, the qname as sent and the zone id:
 * names without GSLB records and names that do not exist. PowerDNS asks for the same few such
 * names around almost every query (the zone's SOA, referral checks, NS and MX targets), so their
 * reply text is built once per snapshot. A reload or a state change publishes a new snapshot and
 * so starts afresh. Returns the replies of `qname` by zone id, for the caller to read and fill.
 */
export function staticRepliesOf(snapshot: object, qname: string): Map<number, string> {
  const names = repliesOf(snapshot).names;
  let replies = names.get(qname);
  if (!replies) {
    if (names.size >= MAX_NAMES) names.clear();
    replies = new Map();
    names.set(qname, replies);
  }
  return replies;
}

/**
 * The same replies by whole request line: PowerDNS sends the very same line for such a lookup
 * again and again (the zone's SOA before every query), so a line seen before is answered without
 * parsing it. Only lines whose reply came from {@link staticRepliesOf} are remembered
 * ({@link rememberStaticLine}); a line's other parameters (`local`, the client) do not change
 * those replies.
 */
export function staticLineReply(snapshot: object, line: string): string | undefined {
  return bySnapshot.get(snapshot)?.lines.get(line);
}

/** Remembers that `line` is answered `reply` on `snapshot` (a reply from {@link staticRepliesOf}). */
export function rememberStaticLine(snapshot: object, line: string, reply: string): void {
  const lines = repliesOf(snapshot).lines;
  if (lines.size >= MAX_NAMES) lines.clear();
  lines.set(line, reply);
}
