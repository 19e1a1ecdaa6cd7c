import { performance } from 'node:perf_hooks';
import { type EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { RCODE_NAMES } from '../../core/dns/rcode.js';
import type { DnsBehaviourConfig } from '../listenerSchema.js';
import type { Engine } from '../../pipeline/engine.js';
import { formatIp, maskAddress, type IpAddress } from '../../core/net/ipAddress.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { Client } from '../../core/query.js';
import { RCODE } from '../../core/dns/rcode.js';
import { type Answer } from '../../core/query.js';
import { clientFor } from '../../core/wire/ecsOption.js';
import { metaQtypeRcode } from '../../core/wire/metaQtype.js';
import { decodeQuery, type WireQuery } from '../../core/wire/wireQuery.js';
import { encodeReply } from '../../core/wire/wireResponse.js';

/** What the DNS front door needs from the process. */
export interface DnsFrontDoorDeps {
  readonly engine: Engine;
  readonly metrics: EngineMetrics;
  readonly log: Logger;
  readonly behaviour: DnsBehaviourConfig;
}

/** Largest DNS message over UDP without EDNS (RFC 1035 §4.2.1). */
const CLASSIC_UDP_LIMIT = 512;

/**
 * Turns one DNS message into its reply (or null when it must be dropped). Never throws: an
 * unexpected failure inside the engine is answered SERVFAIL and logged.
 *
 * The client is the ECS address when the query carries ECS with a source prefix > 0, else the
 * peer (the resolver); IPv4-mapped IPv6 counts as IPv4. Zone transfers and other meta-QTYPEs get
 * an error code without reaching the engine ({@link metaQtypeRcode}).
 */
export function handleMessage(deps: DnsFrontDoorDeps, msg: Buffer, transport: 'udp' | 'tcp', peer: IpAddress): Buffer | null {
  const decoded = decodeQuery(msg);
  const { udpPayloadSize } = deps.behaviour;
  if (decoded.kind === 'drop') {
    deps.metrics.malformed.inc({ transport, outcome: 'dropped' });
    return null;
  }
  if (decoded.kind === 'error') {
    deps.metrics.malformed.inc({ transport, outcome: RCODE_NAMES[decoded.rcode] ?? String(decoded.rcode) });
    deps.metrics.countQuery(transport, decoded.rcode);
    const header = { id: decoded.id, queryFlags: decoded.flags, question: decoded.question, edns: decoded.edns, udpPayloadSize };
    return encodeReply(header, { rcode: decoded.rcode, authoritative: false }, CLASSIC_UDP_LIMIT);
  }
  const q = decoded.query;
  const limit = transport === 'tcp' ? 65535 : q.edns ? Math.min(q.edns.udpSize, udpPayloadSize) : CLASSIC_UDP_LIMIT;
  const header = { id: q.id, queryFlags: q.flags, question: q.question, edns: q.edns, udpPayloadSize };
  const metaRcode = metaQtypeRcode(q.question.type);
  if (metaRcode !== undefined) {
    deps.metrics.countQuery(transport, metaRcode);
    return encodeReply(header, { rcode: metaRcode, authoritative: false }, limit);
  }
  let answer: Answer;
  const client = clientFor(q.edns?.ecs, peer);
  const started = performance.now();
  try {
    answer = deps.engine.resolve({ name: q.question.name, type: q.question.type, client, transport });
  } catch (e) {
    deps.log.error({ err: e, qname: q.question.name, qtype: q.question.type }, 'resolve failed; answering SERVFAIL');
    deps.metrics.countQuery(transport, RCODE.SERVFAIL);
    return encodeReply(header, { rcode: RCODE.SERVFAIL, authoritative: false }, limit);
  }
  deps.metrics.resolveTimes.observe((performance.now() - started) / 1000);
  deps.metrics.countQuery(transport, answer.rcode);
  for (const dc of answer.dcs) deps.metrics.countDc(dc);
  const rate = deps.behaviour.queryLogSampleRate;
  if (rate > 0 && deps.engine.ctx.random() < rate) logQuery(deps.log, q, client, peer, answer, transport);
  return encodeReply(header, answer, limit);
}

/** Logs one sampled query with client and resolver addresses truncated to /24 (IPv4) or /48 (IPv6). */
function logQuery(log: Logger, q: WireQuery, client: Client, peer: IpAddress, a: Answer, transport: string): void {
  const truncate = (ip: IpAddress): string => `${formatIp(maskAddress(ip, ip.family === 4 ? 24 : 48))}/${ip.family === 4 ? 24 : 48}`;
  log.info(
    {
      component: 'query-log',
      qname: q.question.name,
      qtype: q.question.type,
      transport,
      client: truncate(client.address),
      resolver: truncate(peer),
      ecs: client.fromEcs,
      rcode: RCODE_NAMES[a.rcode],
      scope: a.scope,
      answers: a.answers.length,
    },
    'query',
  );
}
