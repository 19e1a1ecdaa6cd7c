import test from 'ava';
import dnsPacket from 'dns-packet';
import { decodeQuery, type DecodedMessage } from './wireQuery.js';

/** A query for www.example.test A; `rest` is appended after the question with the given counts. */
function message(counts: [number, number, number], rest: Buffer): Buffer {
  const header = Buffer.from([0x12, 0x34, 0x00, 0x00, 0x00, 0x01, 0, counts[0], 0, counts[1], 0, counts[2]]);
  const question = Buffer.from([3, ...Buffer.from('www'), 7, ...Buffer.from('example'), 4, ...Buffer.from('test'), 0, 0, 1, 0, 1]);
  return Buffer.concat([header, question, rest]);
}

/** An OPT record (root owner) with payload size, version, flags and options as raw bytes. */
function opt(options: Buffer = Buffer.alloc(0), udpSize = 1232, version = 0, flags = 0, owner = Buffer.from([0])): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(41, 0);
  fixed.writeUInt16BE(udpSize, 2);
  fixed[5] = version;
  fixed.writeUInt16BE(flags, 6);
  fixed.writeUInt16BE(options.length, 8);
  return Buffer.concat([owner, fixed, options]);
}

function option(code: number, data: number[]): Buffer {
  const b = Buffer.alloc(4 + data.length);
  b.writeUInt16BE(code, 0);
  b.writeUInt16BE(data.length, 2);
  Buffer.from(data).copy(b, 4);
  return b;
}

const ECS_8_8_8 = [0, 1, 24, 0, 8, 8, 8];

function reason(d: DecodedMessage): string {
  return d.kind === 'error' ? `${d.rcode}: ${d.reason}` : d.kind;
}

test('an OPT record with ECS gives payload size, version, DO and the client subnet', (t) => {
  const d = decodeQuery(message([0, 0, 1], opt(option(8, ECS_8_8_8), 1232, 0, 0x8000)));
  if (d.kind !== 'query') return t.fail(reason(d));
  const e = d.query.edns!;
  t.deepEqual([e.udpSize, e.version, e.dnssecOk], [1232, 0, true]);
  t.deepEqual([e.ecs?.family, e.ecs?.sourcePrefix, [...e.ecs!.addressBytes]], [1, 24, [8, 8, 8]]);
});

test('payload sizes below 512 count as 512 and unknown options are skipped', (t) => {
  const d = decodeQuery(message([0, 0, 1], opt(Buffer.concat([option(10, [1, 2, 3, 4, 5, 6, 7, 8]), option(8, ECS_8_8_8)]), 100)));
  if (d.kind !== 'query') return t.fail(reason(d));
  t.is(d.query.edns!.udpSize, 512);
  t.is(d.query.edns!.ecs?.sourcePrefix, 24);
});

test('other records beside the OPT record are skipped, compressed owners included', (t) => {
  const a = Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1]);
  const d = decodeQuery(message([0, 1, 2], Buffer.concat([a, a, opt()])));
  t.is(d.kind, 'query');
  if (d.kind === 'query') t.is(d.query.edns?.version, 0);
});

test('a query encoded by dns-packet with ECS decodes the same way', (t) => {
  const packet = dnsPacket.encode({
    type: 'query',
    id: 7,
    questions: [{ name: 'www.example.test', type: 'A' }],
    additionals: [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: 4096,
        flags: 0,
        options: [{ code: 8, family: 2, sourcePrefixLength: 56, scopePrefixLength: 0, ip: '2001:db8:1:200::' }],
      } as unknown as dnsPacket.Answer,
    ],
  });
  const d = decodeQuery(packet);
  if (d.kind !== 'query') return t.fail(reason(d));
  t.deepEqual([d.query.edns!.udpSize, d.query.edns!.ecs?.family, d.query.edns!.ecs?.sourcePrefix, d.query.edns!.ecs?.addressBytes.length], [4096, 2, 56, 7]);
});

test('EDNS version 1 is BADVERS', (t) => {
  const d = decodeQuery(message([0, 0, 1], opt(Buffer.alloc(0), 1232, 1)));
  t.is(reason(d), '16: EDNS version 1');
});

test('malformed OPT records and sections are FORMERR with the reason', (t) => {
  const cases: [string, Buffer, string][] = [
    ['OPT in the answer section', message([1, 0, 0], opt()), 'OPT record outside the additional section'],
    ['OPT in the authority section', message([0, 1, 0], opt()), 'OPT record outside the additional section'],
    ['two OPT records', message([0, 0, 2], Buffer.concat([opt(), opt()])), 'more than one OPT record'],
    ['OPT owner not the root', message([0, 0, 1], opt(Buffer.alloc(0), 1232, 0, 0, Buffer.from([1, 0x61, 0]))), 'OPT record owner is not the root'],
    ['additional count beyond the message', message([0, 0, 1], Buffer.alloc(0)), 'undecodable records: malformed owner name'],
    ['record header cut short', message([0, 0, 1], Buffer.from([0, 0, 41, 4])), 'undecodable records: record runs past the message'],
    ['RDATA cut short', message([0, 0, 1], opt(option(8, ECS_8_8_8)).subarray(0, 14)), 'undecodable records: record data runs past the message'],
    ['forward compression pointer', message([0, 0, 1], Buffer.from([0xc0, 0xff, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0])), 'undecodable records: malformed owner name'],
    ['reserved label type', message([0, 0, 1], Buffer.from([0x40, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0])), 'undecodable records: malformed owner name'],
    [
      'option longer than the OPT record',
      message([0, 0, 1], opt(Buffer.from([0, 8, 0, 9, 0, 1, 24]))),
      'undecodable records: EDNS option runs past the OPT record',
    ],
    ['option header cut short', message([0, 0, 1], opt(Buffer.from([0, 8, 0]))), 'undecodable records: EDNS option runs past the OPT record'],
    ['two ECS options', message([0, 0, 1], opt(Buffer.concat([option(8, ECS_8_8_8), option(8, ECS_8_8_8)]))), 'more than one ECS option'],
    [
      'ECS address longer than the prefix',
      message([0, 0, 1], opt(option(8, [0, 1, 24, 0, 8, 8, 8, 0]))),
      'ECS address length does not match the source prefix',
    ],
  ];
  for (const [what, msg, expected] of cases) t.is(reason(decodeQuery(msg)), `1: ${expected}`, what);
});

test('question labels with bytes that need escapes keep their presentation form', (t) => {
  const header = Buffer.from([0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
  const question = Buffer.from([3, 0x61, 0x2e, 0x62, 2, 0x5c, 0x07, 4, ...Buffer.from('TEST'), 0, 0, 1, 0, 1]);
  const d = decodeQuery(Buffer.concat([header, question]));
  if (d.kind !== 'query') return t.fail(reason(d));
  t.is(d.query.question.name, 'a\\.b.\\\\\\007.TEST');
});
