import test from 'ava';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import dnsPacket from 'dns-packet';
import { QueryFileError } from './countedQueries.js';
import { readQueryFormats } from './queryFormats.js';
import { TcpDnsStreams } from './tcpStreams.js';

/** A DNS query in wire format, with ECS when `ecs` (IPv4, /24) is given. */
function query(name: string, ecs?: string, id = 1): Buffer {
  const additionals = ecs
    ? [
        {
          type: 'OPT' as const,
          name: '.',
          udpPayloadSize: 1232,
          flags: 0,
          extendedRcode: 0,
          ednsVersion: 0,
          flag_do: false,
          options: [{ code: 8 as const, family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, ip: ecs }],
        },
      ]
    : [];
  return dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ name, type: 'A' }], additionals });
}

/** An IPv4 packet from 192.0.2.9 to 192.0.2.53 carrying a UDP datagram or a TCP segment (raw IP link, LINKTYPE 101). */
function ipv4(protocol: 6 | 17, payload: Buffer, tcp: { seq: number; flags: number } = { seq: 0, flags: 0x18 }): Buffer {
  const transport =
    protocol === 17
      ? Buffer.concat([Buffer.from([0xc0, 0x00, 0x00, 0x35, 0, 0, 0, 0]), payload])
      : Buffer.concat([Buffer.from([0xc0, 0x00, 0x00, 0x35, ...u32(tcp.seq), 0, 0, 0, 0, 0x50, tcp.flags, 0xff, 0xff, 0, 0, 0, 0]), payload]);
  const header = Buffer.from([0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, protocol, 0, 0, 192, 0, 2, 9, 192, 0, 2, 53]);
  header.writeUInt16BE(20 + transport.length, 2);
  return Buffer.concat([header, transport]);
}

function u32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

/** A libpcap file (little-endian, raw IP) of the frames. */
function pcap(frames: Buffer[]): Buffer {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65535, 16);
  header.writeUInt32LE(101, 20);
  return Buffer.concat([header, ...frames.flatMap((f) => [record(f), f])]);
}

function record(frame: Buffer): Buffer {
  const r = Buffer.alloc(16);
  r.writeUInt32LE(frame.length, 8);
  r.writeUInt32LE(frame.length, 12);
  return r;
}

/** A pcapng file (one section, one raw-IP interface) of the frames as Enhanced Packet Blocks. */
function pcapng(frames: Buffer[]): Buffer {
  const block = (type: number, body: Buffer): Buffer => {
    const padded = Buffer.concat([body, Buffer.alloc((4 - (body.length % 4)) % 4)]);
    const b = Buffer.alloc(12 + padded.length);
    b.writeUInt32LE(type, 0);
    b.writeUInt32LE(b.length, 4);
    padded.copy(b, 8);
    b.writeUInt32LE(b.length, b.length - 4);
    return b;
  };
  const shb = Buffer.alloc(16);
  shb.writeUInt32LE(0x1a2b3c4d, 0);
  shb.writeUInt16LE(1, 4);
  shb.writeBigInt64LE(-1n, 8);
  const idb = Buffer.alloc(8);
  idb.writeUInt16LE(101, 0);
  const epb = (f: Buffer): Buffer => {
    const h = Buffer.alloc(20);
    h.writeUInt32LE(f.length, 12);
    h.writeUInt32LE(f.length, 16);
    return block(6, Buffer.concat([h, f]));
  };
  return Buffer.concat([block(0x0a0d0d0a, shb), block(1, idb), ...frames.map(epb)]);
}

function framed(message: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(message.length);
  return Buffer.concat([length, message]);
}

/** A dnstap file (Frame Streams: escape, START with the dnstap content type, data frames, STOP) of CLIENT_QUERY messages from 192.0.2.9. */
function dnstap(messages: Buffer[]): Buffer {
  const root = protobuf.parse(
    'syntax = "proto2"; package dnstap; message Dnstap { required uint32 type = 15; optional Message message = 14; } message Message { required uint32 type = 1; optional bytes query_address = 4; optional bytes query_message = 10; }',
    { keepCase: true },
  ).root;
  const type = root.lookupType('dnstap.Dnstap');
  const u32be = (n: number): Buffer => Buffer.from(u32(n));
  const contentType = Buffer.from('protobuf:dnstap.Dnstap');
  const start = Buffer.concat([u32be(2), u32be(1), u32be(contentType.length), contentType]);
  const frames = messages.map((m) => {
    const event = Buffer.from(type.encode({ type: 1, message: { type: 5, query_address: Buffer.from([192, 0, 2, 9]), query_message: m } }).finish());
    return Buffer.concat([u32be(event.length), event]);
  });
  return Buffer.concat([u32be(0), u32be(start.length), start, ...frames, u32be(0), u32be(4), u32be(3)]);
}

test('dnstap: CLIENT_QUERY messages, ECS or query address as client', async (t) => {
  t.deepEqual((await read(dnstap([query('a.example', '10.1.2.0'), query('b.example')]))).queries, [
    { name: 'a.example', type: 'A', client: '10.1.2.0/24', count: 1 },
    { name: 'b.example', type: 'A', client: '192.0.2.9/32', count: 1 },
  ]);
});

const read = (bytes: Buffer, options = {}) => readQueryFormats('f', bytes, options)!;

test('pcap and pcapng: UDP queries and TCP messages split across segments, out of order and retransmitted', async (t) => {
  const stream = Buffer.concat([framed(query('a.example', '10.1.2.0')), framed(query('b.example', undefined, 2))]);
  // The stream starts at the SYN (seq 999, data from 1000); its second half arrives first, then the first twice.
  const frames = [
    ipv4(17, query('u.example', '10.9.9.0')),
    ipv4(6, Buffer.alloc(0), { seq: 999, flags: 0x02 }),
    ipv4(6, stream.subarray(10), { seq: 1010, flags: 0x18 }),
    ipv4(6, stream.subarray(0, 10), { seq: 1000, flags: 0x18 }),
    ipv4(6, stream.subarray(0, 10), { seq: 1000, flags: 0x18 }),
  ];
  const expected = [
    { name: 'u.example', type: 'A', client: '10.9.9.0/24', count: 1 },
    { name: 'a.example', type: 'A', client: '10.1.2.0/24', count: 1 },
    { name: 'b.example', type: 'A', client: '192.0.2.9/32', count: 1 },
  ];
  for (const file of [pcap(frames), pcapng(frames)]) {
    const { queries, skipped } = await read(file);
    t.deepEqual(queries, expected);
    t.is(skipped, 3, 'the SYN, the segment ahead of the gap and the retransmission');
  }
});

test('TCP: a stream whose gap is never filled yields nothing after it; a stream seen mid-connection is framed from its first segment', (t) => {
  const streams = new TcpDnsStreams();
  const m = framed(query('x.example'));
  t.deepEqual(streams.segment('s', 5, 0x18, m), [m.subarray(2)]);
  t.deepEqual(streams.segment('s', 5 + m.length + 3, 0x18, m), []);
  t.deepEqual(streams.segment('t', 0xfffffffe, 0x18, m.subarray(0, 2)), [], 'sequence numbers wrap');
  t.deepEqual(streams.segment('t', 0, 0x18, m.subarray(2)), [m.subarray(2)]);
});

test('dnsperf text: names, types, comments; -E ECS; errors name the line', async (t) => {
  const text = Buffer.from('; comment\nwww.example.test A\nwww.example.test. a\n\nx.example.test TYPE28 extra\n');
  t.deepEqual((await read(text)).queries, [
    { name: 'www.example.test', type: 'A', client: '127.0.0.1/32', count: 2 },
    { name: 'x.example.test', type: 'AAAA', client: '127.0.0.1/32', count: 1 },
  ]);
  t.is((await read(text, { edns: '8:000118000a0102' })).queries[0]!.client, '10.1.2.0/24');
  t.is((await read(text, { source: '2001:db8::1' })).queries[0]!.client, '2001:db8::1/128');
  t.is(
    readQueryFormats('f', Buffer.from('(node:1) Warning: something\n{"component":"query-log"}\n'), {}),
    undefined,
    "a stray line before the engine's JSON lines: still its log",
  );
  await t.throwsAsync(read(Buffer.from('a A\n lead.example A\n')), { instanceOf: QueryFileError, message: 'f: line 2: not "NAME TYPE": " lead.example A"' });
  await t.throwsAsync(read(Buffer.from('a A\n'), { edns: '8:0001' }), { message: /EDNS option 8:0001: ECS option shorter than 4 octets/ });
});

test('damaged records are errors naming the file and the byte offset of the record', async (t) => {
  const frames = [ipv4(17, query('u.example')), ipv4(17, query('v.example'))];
  const p = pcap(frames);
  await t.throwsAsync(read(p.subarray(0, p.length - 5)), {
    instanceOf: QueryFileError,
    message: `f: byte ${24 + 16 + frames[0]!.length}: a packet record cut short by the end of the file`,
  });
  const ng = pcapng(frames);
  const lastBlock = ng.length - (12 + 20 + frames[1]!.length + ((4 - (frames[1]!.length % 4)) % 4));
  await t.throwsAsync(read(ng.subarray(0, ng.length - 4)), {
    instanceOf: QueryFileError,
    message: new RegExp(`^f: byte ${lastBlock}: a block of \\d+ octets does not fit the file$`),
  });
  const binary = Buffer.concat([framed(query('a.example')), framed(query('b.example'))]);
  await t.throwsAsync(read(binary.subarray(0, binary.length - 1)), {
    instanceOf: QueryFileError,
    message: /^f: byte \d+: a \d+-octet message runs past the end of the file$/,
  });
});

test('fuzz: damaged files of every format are read or refused with a QueryFileError, never another failure', async (t) => {
  const frames = [ipv4(17, query('u.example', '10.1.2.0')), ipv4(6, framed(query('t.example')), { seq: 7, flags: 0x18 })];
  const seeds = [
    pcap(frames),
    pcapng(frames),
    Buffer.concat([framed(query('a.example')), framed(query('b.example', '10.2.0.0'))]),
    dnstap([query('a.example', '10.1.2.0'), query('b.example')]),
  ];
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...seeds),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 12 }),
      fc.nat(),
      async (seed, flips, cut) => {
        const bytes = Buffer.from(seed.subarray(0, seed.length - (cut % 24)));
        for (const [at, value] of flips) bytes[4 + (at % Math.max(1, bytes.length - 4))] = value;
        const reading = readQueryFormats('f', bytes, {});
        if (!reading) return;
        try {
          await reading;
        } catch (e) {
          if (!(e instanceof QueryFileError)) throw e;
        }
      },
    ),
    { numRuns: 1500 },
  );
  t.pass();
});
