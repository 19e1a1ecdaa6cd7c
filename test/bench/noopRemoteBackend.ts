import { unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseLookupLine } from '../../src/doors/powerdns/lookupLine.js';

/**
 * The PowerDNS remote backend protocol's own ceiling: a Node backend on a Unix socket that does
 * no engine work. It frames and parses every request and answers `lookup` from canned record
 * texts. Lookup lines are read with gslbd's own reader of PowerDNS's line format
 * (`parseLookupLine`, JSON.parse for any other shape), so the ceiling pays no more to parse a
 * request than gslbd does and the comparison isolates the engine's work. The records: the quickstart zone's static names, and
 * `www.example.test` with one fixed A record carrying `scopeMask: 24` (so PowerDNS treats it as
 * client-dependent, as it treats gslbd's GSLB answers). Lines PowerDNS repeats take gslbd's two
 * shortcuts ({@link NoopSession}). `benchStats` returns the lookup count.
 *
 * Usage: `node noopRemoteBackend.js <socket path>`; prints `ready` once listening. The powerdns
 * group also runs a {@link NoopSession} in-process, beside gslbd's protocol handler.
 */

const SOA = 'ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 60';
/** Record texts after `"qname":<name>,` for each canonical name. */
const RECORDS = new Map<string, string[]>([
  ['example.test', [`"qtype":"SOA","content":${JSON.stringify(SOA)},"ttl":300,"domain_id":1`, '"qtype":"NS","content":"ns1.example.test.","ttl":300']],
  ['ns1.example.test', ['"qtype":"A","content":"192.0.2.53","ttl":300']],
  ['v6.example.test', ['"qtype":"AAAA","content":"2001:db8::10","ttl":300']],
  ['alias.example.test', ['"qtype":"CNAME","content":"www.example.test.","ttl":300']],
  ['www.example.test', ['"qtype":"A","content":"198.51.100.10","ttl":30,"scopeMask":24']],
]);
const DOMAINS = JSON.stringify({
  result: [{ id: 1, zone: 'example.test.', kind: 'native', serial: 2024010101, notified_serial: 2024010101, last_check: 0, masters: [] }],
});

let lookups = 0;

/**
 * One connection's handler, with the two shortcuts gslbd's session takes for the lines PowerDNS
 * repeats (src/doors/powerdns/README.md, "Performance"): a line whose reply does not depend
 * on the client (no `scopeMask`) is answered from the texts remembered by line, and a line equal
 * to the previous one on this connection gets the previous reply; any other line is parsed.
 */
export class NoopSession {
  private lastLine = '';
  private lastReply = '';

  /** The reply to one request line. */
  reply(line: string): string {
    if (line === this.lastLine) {
      lookups++;
      return this.lastReply;
    }
    const known = clientFreeReplies.get(line);
    if (known !== undefined) {
      lookups++;
      return known;
    }
    const reply = noopReply(line);
    if (line.startsWith('{"method": "lookup"')) {
      this.lastLine = line;
      this.lastReply = reply;
      if (!reply.includes('"scopeMask"')) remember(clientFreeReplies, line, reply);
    }
    return reply;
  }
}

/** The reply to one request line, parsed (no shortcuts). */
function noopReply(line: string): string {
  const lookup = parseLookupLine(line);
  if (lookup) return lookupReply(lookup.qname, lookup.qnameJson);
  const req = JSON.parse(line) as { method: string; parameters: Record<string, unknown> };
  switch (req.method) {
    case 'lookup': {
      const qname = String(req.parameters.qname);
      return lookupReply(qname, JSON.stringify(qname));
    }
    case 'initialize':
      return '{"result":true}';
    case 'getAllDomains':
      return DOMAINS;
    case 'getAllDomainMetadata':
      return '{"result":{}}';
    case 'benchStats':
      return JSON.stringify({ result: { lookups } });
    default:
      return '{"result":false}';
  }
}

/** Entries a remembered-text map holds at most; beyond it the map starts afresh. */
const REMEMBERED_LIMIT = 4096;
/** Reply texts by the qname as PowerDNS spelled it: a canned reply depends on nothing else. */
const replies = new Map<string, string>();
/** Reply texts without `scopeMask`, by request line. */
const clientFreeReplies = new Map<string, string>();

function remember(map: Map<string, string>, key: string, value: string): void {
  if (map.size >= REMEMBERED_LIMIT) map.clear();
  map.set(key, value);
}

/**
 * The canned reply to a lookup of `qname` (`qnameJson`: the same name as a JSON string), built
 * once per spelling, so the ceiling spends nothing per lookup beyond framing, parsing and writing.
 */
function lookupReply(qname: string, qnameJson: string): string {
  lookups++;
  let reply = replies.get(qnameJson);
  if (reply === undefined) {
    const records = RECORDS.get(qname.toLowerCase().replace(/\.$/, ''));
    const q = `{"qname":${qnameJson},`;
    reply = records ? `{"result":[${records.map((r) => `${q}${r}}`).join(',')}]}` : '{"result":[]}';
    remember(replies, qnameJson, reply);
  }
  return reply;
}

function serve(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // no stale socket
  }
  createServer((conn) => {
    const session = new NoopSession();
    let pending = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        conn.write(`${session.reply(line)}\n`);
      }
    });
    conn.on('error', () => conn.destroy());
  }).listen(path, () => process.stdout.write('ready\n'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const path = process.argv[2];
  if (!path) {
    process.stderr.write('usage: noopRemoteBackend.js <socket path>\n');
    process.exit(1);
  }
  serve(path);
  // An orderly exit on SIGTERM, so `--cpu-prof` writes its profile.
  process.once('SIGTERM', () => process.exit(0));
}
