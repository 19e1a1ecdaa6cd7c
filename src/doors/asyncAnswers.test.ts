import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { AfterAnswerHook, QueryEngine } from '../core/contracts/frontDoor.js';
import type { Answer, Query } from '../core/model/query.js';
import { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import { createLogger } from '../core/telemetry/logger.js';
import { Engine } from '../pipeline/engine.js';
import { CompactTestClient, encodeQuery } from '../../test/support/compactClient.js';
import { buildQuery, decodeReply, frame, tcpExchange, udpQuery } from '../../test/support/dnsClient.js';
import { fixedContext, snapshotOf } from '../../test/support/selectionFixture.js';
import { CompactServer } from './compact/compactServer.js';
import { compactListenerSchema } from './compact/listenerSchema.js';
import { DnsServer } from './dns/dnsServer.js';
import { dnsBehaviourSchema } from './dns/listenerSchema.js';

// The doors with an engine that answers some names later (as a record whose decision asks
// another name server would) and hooks after the answer (as DNSSEC signing would): the contract
// admits both; nothing in the engine does either yet.

const ZONE = `
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: slow, type: A, data: 192.0.2.7 }
`;

/** The fixture engine, answering names that start with `slow` after `delayMs`. */
function laterEngine(delayMs = 50): QueryEngine {
  const engine = new Engine(snapshotOf(ZONE), fixedContext(), createLogger('silent'));
  return {
    ctx: engine.ctx,
    resolve(q: Query): Answer | Promise<Answer> {
      if (!q.name.startsWith('slow')) return engine.resolve(q);
      return new Promise((r) => setTimeout(() => r(engine.resolve(q)), delayMs));
    },
  };
}

/** A hook that adds a TXT record to the additional section, as a signer adds signatures. */
const marked: AfterAnswerHook = (q, a) => ({ ...a, additional: [...a.additional, { name: q.name, type: 'TXT', ttl: 30, data: ['after-answer'] }] });

async function dnsServer(afterAnswer: AfterAnswerHook[] = []): Promise<{ server: { address: string; port: number }; stop: () => Promise<void> }> {
  const dns = new DnsServer(
    { engine: laterEngine(), metrics: new EngineMetrics(), log: createLogger('silent'), behaviour: dnsBehaviourSchema.parse({}), afterAnswer },
    [{ address: '127.0.0.1', port: 0 }],
  );
  await dns.start();
  return { server: { address: '127.0.0.1', port: dns.bound[0]!.port }, stop: () => dns.stop() };
}

test('standalone listener: an answer the engine gives later is sent over UDP when it settles', async (t) => {
  const { server, stop } = await dnsServer();
  t.teardown(stop);
  const later = await udpQuery(server, { name: 'slow.example.test', type: 'A' });
  t.like(later, { rcode: 0, aa: true, answers: ['slow.example.test A 192.0.2.7'] });
  t.like(await udpQuery(server, { name: 'ns1.example.test', type: 'A' }), { rcode: 0, answers: ['ns1.example.test A 192.0.2.53'] });
});

test('standalone listener over TCP: a later answer does not hold up the pipelined queries after it (RFC 7766 §7)', async (t) => {
  const { server, stop } = await dnsServer();
  t.teardown(stop);
  const bytes = Buffer.concat([
    frame(buildQuery({ name: 'slow.example.test', type: 'A', id: 1 })),
    frame(buildQuery({ name: 'ns1.example.test', type: 'A', id: 2 })),
  ]);
  const { replies } = await tcpExchange(server, bytes, 2);
  t.deepEqual(
    replies.map((r) => decodeReply(r)).map((r) => [r.id, r.answers]),
    [
      [2, ['ns1.example.test A 192.0.2.53']],
      [1, ['slow.example.test A 192.0.2.7']],
    ],
  );
});

test('standalone listener: the after-answer hooks shape the reply, for answers given at once and later', async (t) => {
  const { server, stop } = await dnsServer([marked]);
  t.teardown(stop);
  for (const name of ['ns1.example.test', 'slow.example.test']) {
    const r = await udpQuery(server, { name, type: 'A' });
    t.deepEqual(r.additional, [`${name} TXT after-answer`], name);
  }
});

test('compact listener: a later answer is written when it settles, after the answers to later queries (matched by id)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-a-'));
  const path = join(dir, 'engine.sock');
  const compact = new CompactServer(
    { engine: laterEngine(), metrics: new EngineMetrics(), log: createLogger('silent'), afterAnswer: [marked] },
    compactListenerSchema.parse({ path }),
    path,
  );
  await compact.start();
  t.teardown(async () => {
    await compact.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const c = await CompactTestClient.open(path);
  const query = (id: number, qname: string): Buffer =>
    encodeQuery({ id, qtype: 1, qclass: 1, transport: 0, sourceAddress: '192.0.2.99', sourcePort: 5300, qname });
  c.send(Buffer.concat([query(1, 'slow.example.test'), query(2, 'ns1.example.test')]));
  t.like(await c.next(), { kind: 'ANSWER', id: 2, rcode: 0, answers: [{ data: '192.0.2.53' }], additionals: [{ type: 'TXT' }] });
  t.like(await c.next(), { kind: 'ANSWER', id: 1, rcode: 0, answers: [{ data: '192.0.2.7' }], additionals: [{ type: 'TXT' }] });
  c.close();
});
