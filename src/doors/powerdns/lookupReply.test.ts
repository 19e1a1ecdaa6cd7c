import test from 'ava';
import { presentData } from '../../core/dns/presentation.js';
import type { ResourceRecord } from '../../core/dns/records.js';
import type { NameContents, NameRrset } from '../../pipeline/zones/nameRrsets.js';
import type { ZoneData } from '../../pipeline/zones/zoneIndex.js';
import { lookupReply } from './lookupReply.js';
import { remoteClient, scopeMask, type RemoteClient } from './remoteClient.js';

const ZONE = { name: 'example.test' } as ZoneData;
const soa: ResourceRecord = {
  name: 'example.test',
  type: 'SOA',
  ttl: 300,
  data: { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 7, refresh: 3600, retry: 600, expire: 604800, minimum: 60 },
};
const ns: ResourceRecord = { name: 'example.test', type: 'NS', ttl: 300, data: 'ns1.example.test' };

function selected(data: string[], scope: number, frozen: boolean): NameRrset {
  const records = data.map((d): ResourceRecord =>
    frozen ? Object.freeze({ name: 'www.example.test', type: 'A', ttl: 30, data: d }) : { name: 'www.example.test', type: 'A', ttl: 30, data: d },
  );
  return {
    type: 'A',
    records: frozen ? Object.freeze(records) : records,
    scope,
    selected: true,
    dcs: ['us-east'],
    record: { name: 'www.example.test', type: 'A' },
  };
}

/** The reply as JSON.stringify writes it from objects: the oracle, independent of lookupReply's string building and memo. */
function oracle(qname: string, rrsets: readonly NameRrset[], rc: RemoteClient, domainId: number): string {
  const result = rrsets.flatMap((rrset) => {
    const mask = scopeMask(rc, rrset.scope);
    return rrset.records.map((r) => ({
      qname,
      qtype: rrset.type,
      content: presentData(r.type, r.data),
      ttl: r.ttl,
      ...(mask > 0 ? { scopeMask: mask } : {}),
      ...(r.type === 'SOA' ? { domain_id: domainId } : {}),
    }));
  });
  return `${JSON.stringify({ result })}\n`;
}

test('replies of frozen (shared) RRsets are byte for byte the freshly written ones, whatever spelling, client and zone id came before', (t) => {
  const shared = selected(['192.0.2.10', '192.0.2.11'], 24, true);
  const sharedAlone = selected(['198.51.100.10'], 20, true);
  const staticSet: NameRrset = { type: 'SOA', records: Object.freeze([soa]), scope: 0, selected: false, dcs: [], record: undefined };
  const nsSet: NameRrset = { type: 'NS', records: [ns], scope: 0, selected: false, dcs: [], record: undefined };
  const fresh = selected(['203.0.113.10'], 16, false);
  const names = ['www.example.test.', 'WWW.Example.Test.', 'w\\046w.example.test.'];
  const clients = [
    remoteClient('8.8.8.0/24', '127.0.0.1'),
    remoteClient('2001:db8::/48', '::1'),
    remoteClient('::ffff:8.8.8.0/120', '127.0.0.1'),
    remoteClient('0.0.0.0/0', '127.0.0.1'),
    remoteClient('127.0.0.1/32', '127.0.0.1'),
  ];
  const shapes: NameRrset[][] = [[sharedAlone], [shared], [staticSet, nsSet, shared], [staticSet, sharedAlone, fresh], [fresh]];
  let checked = 0;
  // Each of spelling, zone id and client changes alone between calls, twice over, so every memo
  // entry is hit and replaced for each reason.
  for (let round = 0; round < 2; round++) {
    for (const domainId of [1, 744470781]) {
      for (const qname of names) {
        for (const rc of clients) {
          for (const rrsets of shapes) {
            const contents: NameContents = { zone: ZONE, exists: true, dynamic: true, rrsets };
            t.is(lookupReply(JSON.stringify(qname), contents, rc, domainId, true), oracle(qname, rrsets, rc, domainId));
            checked++;
          }
        }
      }
    }
  }
  t.is(checked, 2 * 3 * 5 * 2 * 5);
  // The zone id alone changes (it is written on SOA records only).
  const apex: NameContents = { zone: ZONE, exists: true, dynamic: true, rrsets: [staticSet, nsSet, shared] };
  for (const domainId of [5, 6, 5])
    t.is(lookupReply('"example.test."', apex, clients[0]!, domainId, true), oracle('example.test.', apex.rrsets, clients[0]!, domainId));
});

test('a name without RRsets: the empty non-terminal marker for ANY, nothing otherwise', (t) => {
  const rc = remoteClient('8.8.8.0/24', '127.0.0.1');
  t.is(
    lookupReply('"ent.example.test."', { zone: ZONE, exists: true, dynamic: false, rrsets: [] }, rc, 1, true),
    '{"result":[{"qname":"ent.example.test.","qtype":"ENT","content":"","ttl":0}]}\n',
  );
  t.is(lookupReply('"ent.example.test."', { zone: ZONE, exists: true, dynamic: false, rrsets: [] }, rc, 1, false), '{"result":[]}\n');
  t.is(lookupReply('"no.example.test."', { zone: ZONE, exists: false, dynamic: false, rrsets: [] }, rc, 1, true), '{"result":[]}\n');
});
