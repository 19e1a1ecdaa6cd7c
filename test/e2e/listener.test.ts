import test from 'ava';
import { connect } from 'node:net';
import { dig, runDig } from '../support/dig.js';
import { buildQuery, decodeReply, frame, tcpExchange, tcpQuery, udpExchange, udpQuery } from '../support/dnsClient.js';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { fixtureConfig, fixtureLocationFiles, MANY_COUNT, WWW } from '../support/fixtureDeployment.js';
import { seededRandom } from '../support/seededRandom.js';

/**
 * The standalone DNS listener end to end: the real engine process on the fixture deployment
 * (test/support/fixtureDeployment.ts), queried with the real `dig` and with a dns-packet client.
 */

let engine: EngineProcess;
test.before(async () => {
  engine = await startEngine(fixtureConfig(), { files: fixtureLocationFiles() });
});
test.after.always(stopAllEngines);

const v4 = () => engine.dns[0]!;
const v6 = () => engine.dns[1]!;

const SOA = /^example\.test\.\t60\tIN\tSOA\tns1\.example\.test\. hostmaster\.example\.test\. \d+ 3600 600 604800 60$/;

// ECS source → answer, scope (gdnsd style: the table is the specification).
const ecsTable: [subnet: string, answer: string, scope: number][] = [
  ['10.20.30.0/24', WWW.ap, 24],
  ['10.20.30.5/32', WWW.ap, 24],
  ['10.20.99.0/24', WWW.us, 18],
  ['10.20.0.0/16', WWW.us, 20],
  ['10.99.0.0/24', WWW.eu, 10],
  ['11.0.0.0/24', WWW.us, 8],
  ['2001:db8::/48', WWW.eu, 32],
  ['2001:db9::/48', WWW.us, 32],
];
for (const [subnet, answer, scope] of ecsTable) {
  test(`dig +subnet=${subnet} → ${answer} scope /${scope}`, async (t) => {
    const r = await dig(v4(), ['www.example.test', 'A', `+subnet=${subnet}`]);
    t.is(r.status, 'NOERROR');
    t.true(r.flags.includes('aa'));
    t.deepEqual(
      r.answer.map((a) => [a.name, a.ttl, a.type, a.data]),
      [['www.example.test.', 30, 'A', answer]],
    );
    t.deepEqual(r.ecs, { subnet: subnet.split('/')[0]!, source: Number(subnet.split('/')[1]), scope });
  });
  test(`dns-packet ECS ${subnet} → ${answer} scope /${scope}`, async (t) => {
    const r = await udpQuery(v4(), { name: 'www.example.test', type: 'A', edns: { ecs: subnet } });
    t.deepEqual(r.answers, [`www.example.test A ${answer}`]);
    t.deepEqual([r.ecs?.family, r.ecs?.sourcePrefix, r.ecs?.scopePrefix], [subnet.includes(':') ? 2 : 1, Number(subnet.split('/')[1]), scope]);
  });
}

test('IPv4-mapped ECS keeps family 2 and gets scope 96 + the IPv4 scope', async (t) => {
  const r = await udpQuery(v4(), { name: 'www.example.test', type: 'A', edns: { ecs: '::ffff:10.20.30.0/120' } });
  t.deepEqual(r.answers, [`www.example.test A ${WWW.ap}`]);
  t.deepEqual([r.ecs?.family, r.ecs?.sourcePrefix, r.ecs?.scopePrefix], [2, 120, 120]);
  t.deepEqual([...r.ecs!.address], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 20, 30]);
  const d = await dig(v4(), ['www.example.test', 'A', '+subnet=::ffff:10.20.99.0/120']);
  t.deepEqual([d.answer[0]?.data, d.ecs?.scope], [WWW.us, 96 + 18]);
});

test('IPv4-mapped ECS of /96 (no IPv4 bits): the resolver decides and the scope is 0', async (t) => {
  const r = await udpQuery(v4(), { name: 'www.example.test', type: 'A', edns: { ecs: '::ffff:0.0.0.0/96' } });
  t.deepEqual(r.answers, [`www.example.test A ${WWW.us}`]);
  t.deepEqual([r.ecs?.family, r.ecs?.sourcePrefix, r.ecs?.scopePrefix], [2, 96, 0]);
});

test('ECS source /0: the resolver address decides and the scope is 0', async (t) => {
  const r = await udpQuery(v4(), { name: 'www.example.test', type: 'A', edns: { ecs: '0.0.0.0/0' } });
  t.deepEqual(r.answers, [`www.example.test A ${WWW.us}`], '127.0.0.1 has no location: the default DC');
  t.deepEqual([r.ecs?.family, r.ecs?.sourcePrefix, r.ecs?.scopePrefix, r.ecs?.address.length], [1, 0, 0, 0]);
  const d = await dig(v4(), ['www.example.test', 'A', '+subnet=0.0.0.0/0']);
  t.deepEqual(d.ecs, { subnet: '0.0.0.0', source: 0, scope: 0 });
  // `dig +subnet=0` sends FAMILY 0 with no address, as BIND and miekg/dns accept.
  const zero = await dig(v4(), ['www.example.test', 'A', '+subnet=0']);
  t.deepEqual([zero.status, zero.answer[0]?.data, zero.ecs?.source, zero.ecs?.scope], ['NOERROR', WWW.us, 0, 0]);
});

test('ECS is echoed only when the query carried it', async (t) => {
  const withEdns = await udpQuery(v4(), { name: 'www.example.test', type: 'A', edns: {} });
  t.truthy(withEdns.opt);
  t.is(withEdns.ecs, undefined);
  const d = await dig(v4(), ['www.example.test', 'A']);
  t.is(d.ecs, undefined);
});

test('a static answer and a negative answer get scope 0', async (t) => {
  const stat = await udpQuery(v4(), { name: 'ns1.example.test', type: 'A', edns: { ecs: '10.20.30.0/24' } });
  t.deepEqual([stat.answers, stat.ecs?.scopePrefix], [['ns1.example.test A 192.0.2.53'], 0]);
  const neg = await udpQuery(v4(), { name: 'nope.example.test', type: 'A', edns: { ecs: '10.20.30.0/24' } });
  t.deepEqual([neg.rcode, neg.ecs?.scopePrefix], [3, 0]);
});

// Malformed ECS options → FORMERR (RFC 7871 §7.1.1 / §6).
const badEcs: [title: string, data: number[]][] = [
  ['family 3', [0, 3, 8, 0, 10]],
  ['IPv4 source prefix 33', [0, 1, 33, 0, 10, 20, 30, 40, 50]],
  ['non-zero scope in a query', [0, 1, 24, 8, 10, 20, 30]],
  ['address longer than the prefix needs', [0, 1, 8, 0, 10, 20]],
  ['address shorter than the prefix needs', [0, 1, 24, 0, 10, 20]],
  ['bits set beyond the source prefix', [0, 1, 23, 0, 10, 20, 31]],
];
for (const [title, data] of badEcs) {
  test(`malformed ECS (${title}) → FORMERR, and the listener keeps serving`, async (t) => {
    const r = await udpQuery(v4(), { name: 'www.example.test', type: 'A', edns: { options: [{ code: 8, data: Buffer.from(data) }] } });
    t.is(r.rcode, 1);
    t.is(r.answers.length, 0);
    t.truthy(r.opt, 'the reply to an EDNS query carries OPT');
  });
}

test('an ECS option shorter than 4 bytes → FORMERR with OPT', async (t) => {
  const r = await udpQuery(v4(), { name: 'www.example.test', type: 'A', edns: { options: [{ code: 8, data: Buffer.from([0, 1, 8]) }] } });
  t.is(r.rcode, 1);
  t.truthy(r.opt);
  t.is(r.ecs, undefined, 'a malformed ECS option is not echoed');
});

test('an EDNS option running past the OPT record → FORMERR with OPT', async (t) => {
  const q = buildQuery({ name: 'www.example.test', type: 'A', edns: { options: [{ code: 10, data: Buffer.from([1, 2, 3, 4]) }] } });
  // The option claims 8 bytes of data; the OPT RDATA holds 4.
  q.writeUInt16BE(8, q.length - 6);
  const r = decodeReply((await udpExchange(v4(), q))!);
  t.is(r.rcode, 1);
  t.truthy(r.opt);
});

test('two ECS options → FORMERR', async (t) => {
  const r = await udpQuery(v4(), {
    name: 'www.example.test',
    type: 'A',
    edns: { ecs: '10.0.0.0/8', options: [{ code: 8, data: Buffer.from([0, 1, 8, 0, 10]) }] },
  });
  t.is(r.rcode, 1);
});

test('rcodes: REFUSED outside our zones, NXDOMAIN and NODATA with the SOA, AA on our answers', async (t) => {
  const refused = await dig(v4(), ['www.elsewhere.invalid', 'A']);
  t.is(refused.status, 'REFUSED');
  t.false(refused.flags.includes('aa'));
  const nx = await dig(v4(), ['nope.example.test', 'A']);
  t.is(nx.status, 'NXDOMAIN');
  t.true(nx.flags.includes('aa'));
  t.is(nx.answer.length, 0);
  t.regex(`${nx.authority[0]!.name}\t${nx.authority[0]!.ttl}\tIN\t${nx.authority[0]!.type}\t${nx.authority[0]!.data}`, SOA);
  const nodata = await dig(v4(), ['www.example.test', 'AAAA']);
  t.deepEqual([nodata.status, nodata.answer.length, nodata.authority.map((a) => a.type)], ['NOERROR', 0, ['SOA']]);
  const ent = await dig(v4(), ['deep.example.test', 'A']);
  t.deepEqual([ent.status, ent.answer.length], ['NOERROR', 0], 'an empty non-terminal is NODATA');
  const cname = await dig(v4(), ['alias.example.test', 'A', '+subnet=10.20.30.0/24']);
  t.deepEqual(
    cname.answer.map((a) => `${a.name} ${a.type} ${a.data}`),
    ['alias.example.test. CNAME www.example.test.', `www.example.test. A ${WWW.ap}`],
  );
  t.is(cname.ecs?.scope, 24);
});

test('the question case is preserved in the answer', async (t) => {
  const r = await dig(v4(), ['WwW.ExAmPlE.TeSt', 'A', '+subnet=10.20.30.0/24']);
  t.deepEqual(
    r.answer.map((a) => a.name),
    ['WwW.ExAmPlE.TeSt.'],
  );
});

test('EDNS: OPT only when the query had one; payload 1232 advertised', async (t) => {
  const plain = await udpQuery(v4(), { name: 'ns1.example.test', type: 'A' });
  t.is(plain.opt, undefined);
  t.is(plain.raw.readUInt16BE(10), 0, 'ARCOUNT 0 without EDNS');
  const edns = await udpQuery(v4(), { name: 'ns1.example.test', type: 'A', edns: { udpPayloadSize: 4096 } });
  t.deepEqual(edns.opt, { udpPayloadSize: 1232, version: 0, extendedRcode: 0 });
  const d = await dig(v4(), ['ns1.example.test', 'A']);
  t.deepEqual(d.edns, { version: 0, udp: 1232 });
  const noedns = await dig(v4(), ['ns1.example.test', 'A', '+noedns']);
  t.is(noedns.edns, undefined);
});

test('EDNS version 1 → BADVERS with OPT version 0', async (t) => {
  const r = await udpQuery(v4(), { name: 'ns1.example.test', type: 'A', edns: { version: 1 } });
  t.is(r.rcode, 16);
  t.deepEqual(r.opt, { udpPayloadSize: 1232, version: 0, extendedRcode: 1 });
  t.is(r.answers.length, 0);
  const d = await dig(v4(), ['ns1.example.test', 'A', '+edns=1', '+noednsneg']);
  t.is(d.status, 'BADVERS');
});

test('QR=1 (a response) is dropped', async (t) => {
  const q = buildQuery({ name: 'ns1.example.test', type: 'A' });
  q.writeUInt16BE(q.readUInt16BE(2) | 0x8000, 2);
  t.is(await udpExchange(v4(), q, 500), undefined);
  t.is((await udpQuery(v4(), { name: 'ns1.example.test', type: 'A' })).rcode, 0);
});

for (const [opcode, name] of [
  [4, 'NOTIFY'],
  [5, 'UPDATE'],
  [2, 'STATUS'],
] as const) {
  test(`opcode ${name} → NOTIMP`, async (t) => {
    const r = await udpQuery(v4(), { name: 'example.test', type: 'SOA', flags: opcode << 11 });
    t.deepEqual([r.rcode, r.opcode, r.aa], [4, opcode, false]);
  });
}

test('opcode NOTIFY via dig → NOTIMP', async (t) => {
  const d = await dig(v4(), ['example.test', 'SOA', '+opcode=notify', '+noedns']);
  t.deepEqual([d.opcode, d.status], ['NOTIFY', 'NOTIMP']);
});

test('an opcode error reply to an EDNS query still carries OPT', async (t) => {
  const r = await udpQuery(v4(), { name: 'example.test', type: 'SOA', flags: 4 << 11, edns: {} });
  t.is(r.rcode, 4);
  t.truthy(r.opt);
});

test('QDCOUNT 2 and QDCOUNT 0 → FORMERR', async (t) => {
  const two = Buffer.from(buildQuery({ name: 'ns1.example.test', type: 'A' }));
  const q = two.subarray(12);
  const msg = Buffer.concat([two, q]);
  msg.writeUInt16BE(2, 4);
  const r2 = decodeReply((await udpExchange(v4(), msg))!);
  t.is(r2.rcode, 1);
  const zero = Buffer.from(two.subarray(0, 12));
  zero.writeUInt16BE(0, 4);
  const r0 = decodeReply((await udpExchange(v4(), zero))!);
  t.is(r0.rcode, 1);
});

test('over 512 bytes without EDNS → TC=1 and empty sections; the same query over TCP gets everything', async (t) => {
  const udp = await udpQuery(v4(), { name: 'many.example.test', type: 'A' });
  t.true(udp.tc);
  t.is(udp.answers.length, 0);
  t.true(udp.raw.length <= 512);
  const tcp = await tcpQuery(v4(), { name: 'many.example.test', type: 'A' });
  t.false(tcp.tc);
  t.is(tcp.answers.length, MANY_COUNT);
  // With EDNS the 1232-byte limit fits all of them over UDP.
  const edns = await udpQuery(v4(), { name: 'many.example.test', type: 'A', edns: {} });
  t.deepEqual([edns.tc, edns.answers.length], [false, MANY_COUNT]);
  // An EDNS requestor size of 512 is honoured.
  const small = await udpQuery(v4(), { name: 'many.example.test', type: 'A', edns: { udpPayloadSize: 512 } });
  t.true(small.tc);
});

test('dig sees TC over UDP and retries over TCP by itself', async (t) => {
  const truncated = await dig(v4(), ['many.example.test', 'A', '+noedns', '+ignore']);
  t.true(truncated.flags.includes('tc'));
  const retried = await dig(v4(), ['many.example.test', 'A', '+noedns']);
  t.false(retried.flags.includes('tc'));
  t.is(retried.answer.length, MANY_COUNT);
  t.regex(retried.output, /Truncated, retrying in TCP mode/);
});

test('TCP pipelining: five queries in one write, five answers', async (t) => {
  const names = ['ns1', 'v6', 'www', 'alias', 'nope'];
  const bytes = Buffer.concat(names.map((n, i) => frame(buildQuery({ name: `${n}.example.test`, type: n === 'v6' ? 'AAAA' : 'A', id: 1000 + i }))));
  const { replies } = await tcpExchange(v4(), bytes, names.length);
  const decoded = replies.map(decodeReply);
  t.deepEqual(
    decoded.map((r) => r.id).sort((a, b) => a - b),
    [1000, 1001, 1002, 1003, 1004],
  );
  const byId = new Map(decoded.map((r) => [r.id, r]));
  t.deepEqual(byId.get(1000)!.answers, ['ns1.example.test A 192.0.2.53']);
  t.deepEqual(byId.get(1001)!.answers, ['v6.example.test AAAA 2001:db8::10']);
  t.is(byId.get(1004)!.rcode, 3);
});

test('TCP: a query split across writes is answered', async (t) => {
  const bytes = frame(buildQuery({ name: 'ns1.example.test', type: 'A', id: 77 }));
  const reply = await new Promise<Buffer>((resolve, reject) => {
    const s = connect(v4().port, v4().address, () => {
      s.write(bytes.subarray(0, 1));
      setTimeout(() => s.write(bytes.subarray(1, 10)), 50);
      setTimeout(() => s.write(bytes.subarray(10)), 100);
    });
    let got = Buffer.alloc(0);
    s.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
        s.destroy();
        resolve(got.subarray(2));
      }
    });
    s.on('error', reject);
    setTimeout(() => reject(new Error('no reply')), 10000);
  });
  t.deepEqual(decodeReply(reply).answers, ['ns1.example.test A 192.0.2.53']);
});

test('a TCP frame shorter than a header closes only that connection', async (t) => {
  const other = connect(v4().port, v4().address);
  await new Promise((r) => other.once('connect', r));
  const bad = await tcpExchange(v4(), Buffer.from([0, 5, 1, 2, 3, 4, 5]), 1, 3000);
  t.true(bad.closedByServer);
  t.is(bad.replies.length, 0);
  // The other connection is still served.
  const reply = await new Promise<Buffer>((resolve, reject) => {
    let got = Buffer.alloc(0);
    other.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) resolve(got.subarray(2));
    });
    other.on('error', reject);
    other.write(frame(buildQuery({ name: 'ns1.example.test', type: 'A' })));
    setTimeout(() => reject(new Error('no reply on the surviving connection')), 10000);
  });
  other.destroy();
  t.deepEqual(decodeReply(reply).answers, ['ns1.example.test A 192.0.2.53']);
});

/** Datagrams that must not crash or stall the listener. */
function garbage(): Buffer[] {
  const random = seededRandom(7);
  const out: Buffer[] = [];
  for (let i = 0; i < 150; i++) {
    const len = Math.floor(random() * 120);
    out.push(Buffer.from(Array.from({ length: len }, () => Math.floor(random() * 256))));
  }
  const header = (qd: number, an: number, ar: number, flags = 0): Buffer => {
    const h = Buffer.alloc(12);
    h.writeUInt16BE(0x1234, 0);
    h.writeUInt16BE(flags, 2);
    h.writeUInt16BE(qd, 4);
    h.writeUInt16BE(an, 6);
    h.writeUInt16BE(ar, 10);
    return h;
  };
  out.push(Buffer.alloc(0));
  out.push(Buffer.from([1, 2, 3, 4, 5])); // truncated header
  out.push(header(1, 0, 0)); // a question promised, none present
  out.push(Buffer.concat([header(1, 0, 0), Buffer.from([3, 0x77, 0x77])])); // label runs past the end
  out.push(Buffer.concat([header(1, 0, 0), Buffer.from([0xc0, 0x0c, 0, 1, 0, 1])])); // pointer to itself in the question
  out.push(Buffer.concat([header(1, 0, 0), Buffer.from([0x40, 0, 0, 1, 0, 1])])); // extended label type
  out.push(Buffer.concat([header(1, 0, 0), Buffer.from([1, 0x61, 0, 0, 1])])); // class cut off
  const good = buildQuery({ name: 'ns1.example.test', type: 'A' });
  // An additional record whose owner is a pointer loop (points at itself).
  const loop = Buffer.concat([good, Buffer.from([0xc0, good.length, 0, 41, 16, 0, 0, 0, 0, 0, 0, 0])]);
  loop.writeUInt16BE(1, 10);
  out.push(loop);
  // A forward pointer out of the message.
  const fwd = Buffer.concat([good, Buffer.from([0xc3, 0xff, 0, 41, 16, 0, 0, 0, 0, 0, 0, 0])]);
  fwd.writeUInt16BE(1, 10);
  out.push(fwd);
  // ARCOUNT promises records that are not there.
  const missing = Buffer.from(good);
  missing.writeUInt16BE(3, 10);
  out.push(missing);
  // A name longer than 255 octets in the question.
  const longName = Buffer.concat([
    header(1, 0, 0),
    ...Array.from({ length: 5 }, () => Buffer.concat([Buffer.from([63]), Buffer.alloc(63, 0x61)])),
    Buffer.from([0, 0, 1, 0, 1]),
  ]);
  out.push(longName);
  return out;
}

test('garbage datagrams get FORMERR or nothing, and a good query is still answered', async (t) => {
  const raws = await Promise.all(garbage().map((g) => udpExchange(v4(), g, 1000)));
  const replies = raws.map((raw) => {
    if (!raw) return 'none';
    try {
      return decodeReply(raw);
    } catch {
      return 'undecodable';
    }
  });
  t.false(replies.includes('undecodable'), 'every reply is a well-formed DNS message');
  for (const r of replies) if (typeof r === 'object') t.not(r.rcode, 2, 'never SERVFAIL for bad input');
  const good = await udpQuery(v4(), { name: 'ns1.example.test', type: 'A' });
  t.deepEqual(good.answers, ['ns1.example.test A 192.0.2.53']);
  t.false(
    engine.logs().some((l) => l.level >= 50),
    'no error logged',
  );
});

test('the specific malformed messages get the specific answers', async (t) => {
  const raws = await Promise.all(
    garbage()
      .slice(150)
      .map((b) => udpExchange(v4(), b, 3000)),
  );
  // empty, truncated header → dropped; the rest → FORMERR.
  t.deepEqual(
    raws.map((raw) => (raw ? decodeReply(raw).rcode : 'none')),
    ['none', 'none', 1, 1, 1, 1, 1, 1, 1, 1, 1],
  );
});

test('garbage over TCP closes or answers that connection only', async (t) => {
  await Promise.all(
    garbage()
      .slice(0, 40)
      .map((g) => tcpExchange(v4(), Buffer.concat([frame(g), frame(g)]), 2, 1000)),
  );
  t.deepEqual((await tcpQuery(v4(), { name: 'ns1.example.test', type: 'A' })).answers, ['ns1.example.test A 192.0.2.53']);
});

test('the IPv6 loopback listener answers over UDP and TCP', async (t) => {
  t.is(v6().address, '::1');
  const d = await dig(v6(), ['v6.example.test', 'AAAA']);
  t.deepEqual(
    d.answer.map((a) => a.data),
    ['2001:db8::10'],
  );
  const u = await udpQuery(v6(), { name: 'www.example.test', type: 'A' });
  t.deepEqual(u.answers, [`www.example.test A ${WWW.us}`], '::1 has no location: the default DC');
  const tcp = await tcpQuery(v6(), { name: 'www.example.test', type: 'A', edns: { ecs: '10.20.30.0/24' } });
  t.deepEqual([tcp.answers, tcp.ecs?.scopePrefix], [[`www.example.test A ${WWW.ap}`], 24]);
});

test('ANY over UDP → one HINFO (RFC 8482); over TCP → every RRset', async (t) => {
  // dig 9.18 asks ANY over TCP unless told otherwise.
  const udp = await dig(v4(), ['example.test', 'ANY', '+notcp']);
  t.deepEqual(
    udp.answer.map((a) => `${a.type} ${a.data}`),
    ['HINFO "RFC8482" ""'],
  );
  t.regex(udp.output, /\(UDP\)/);
  const tcp = await dig(v4(), ['example.test', 'ANY', '+tcp']);
  t.deepEqual(
    tcp.answer.map((a) => a.type),
    ['SOA', 'NS'],
  );
});

const metaQtypes: [name: string, qtype: number, rcode: number][] = [
  ['AXFR', 252, 5],
  ['IXFR', 251, 5],
  ['MAILB', 253, 4],
  ['MAILA', 254, 4],
  ['TKEY', 249, 4],
  ['TSIG', 250, 1],
  ['OPT', 41, 1],
];
for (const [name, qtype, rcode] of metaQtypes) {
  test(`QTYPE ${name} → rcode ${rcode} over UDP and TCP, no records`, async (t) => {
    // dns-packet encodes type names only: the question's type is patched in (the last 4 bytes are QTYPE, QCLASS).
    const query = buildQuery({ name: 'example.test', type: 'A' });
    query.writeUInt16BE(qtype, query.length - 4);
    for (const reply of [await udpQuery(v4(), query), await tcpQuery(v4(), query)]) {
      t.deepEqual([reply.rcode, reply.aa, reply.answers, reply.authority], [rcode, false, [], []]);
    }
  });
}

test('dig AXFR and IXFR: the transfer is refused', async (t) => {
  for (const args of [
    ['example.test', 'AXFR'],
    ['example.test', 'IXFR=1'],
  ]) {
    const output = await runDig([`@${v4().address}`, '-p', String(v4().port), '+time=2', '+tries=1', ...args]);
    t.regex(output, /; Transfer failed\./, args.join(' '));
    t.notRegex(output, /\tSOA\t/, 'no record of the zone is sent');
  }
});

test('class CH is refused', async (t) => {
  const d = await dig(v4(), ['-c', 'CH', 'version.bind', 'TXT']);
  t.is(d.status, 'REFUSED');
});

test('TCP back-pressure: a peer that does not read gets every answer once it reads, and no listener leak', async (t) => {
  const count = 20000;
  const bytes = Buffer.concat(Array.from({ length: count }, () => frame(buildQuery({ name: 'many.example.test', type: 'A' }))));
  const socket = connect(v4().port, v4().address);
  t.teardown(() => socket.destroy());
  socket.pause();
  await new Promise<void>((r) => socket.write(bytes, () => r()));
  // Give the server time to answer until its send buffer is full and it pauses.
  await new Promise((r) => setTimeout(r, 1500));
  let received = 0;
  let pending = Buffer.alloc(0);
  const all = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        pending = pending.subarray(2 + pending.readUInt16BE(0));
        if (++received === count) resolve();
      }
    });
  });
  socket.resume();
  await Promise.race([all, new Promise((r) => setTimeout(r, 30000))]);
  t.is(received, count);
  t.false(engine.stderr().includes('MaxListenersExceededWarning'), engine.stderr().slice(0, 500));
});
