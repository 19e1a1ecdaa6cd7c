/** Names kept per snapshot; a flood of distinct ones clears the map rather than growing it. */
const MAX_NAMES = 8192;
/** Request lines remembered per connection (PowerDNS repeats a few around every query). */
const LINE_SLOTS = 8;

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

/**
 * The same replies by whole request line, for one connection: PowerDNS sends the very same line
 * for such a lookup again and again (the zone's SOA before every query), so a line seen before is
 * answered without parsing it. Only lines whose reply came from {@link staticRepliesOf} are
 * remembered; a line's other parameters (`local`, the client) do not change those replies.
 *
 * Why a small ring compared by string equality rather than a map: every line read from the socket
 * is a new string, and a map lookup hashes all of it (~150 bytes) first. Under dnsperf that hash
 * showed as ~1.5 µs per query in profiles of the live backend (the in-process handler table does
 * not see it, as it hands the same strings again); an equality test rejects other lines on their
 * length or first differing byte and never hashes.
 */
export class StaticLines {
  private readonly lines: (string | undefined)[] = new Array<string | undefined>(LINE_SLOTS).fill(undefined);
  private readonly replies: string[] = new Array<string>(LINE_SLOTS).fill('');
  private snapshot: object | undefined;
  private next = 0;

  /** The reply remembered for `line` on `snapshot`; undefined when it has none. */
  reply(snapshot: object, line: string): string | undefined {
    if (snapshot !== this.snapshot) return undefined;
    for (let i = 0; i < LINE_SLOTS; i++) if (this.lines[i] === line) return this.replies[i];
    return undefined;
  }

  /** Remembers that `line` is answered `reply` on `snapshot` (a reply from {@link staticRepliesOf}); a new snapshot forgets the others. */
  remember(snapshot: object, line: string, reply: string): void {
    if (snapshot !== this.snapshot) {
      this.snapshot = snapshot;
      this.lines.fill(undefined);
      this.next = 0;
    }
    this.lines[this.next] = line;
    this.replies[this.next] = reply;
    this.next = (this.next + 1) % LINE_SLOTS;
  }
}
