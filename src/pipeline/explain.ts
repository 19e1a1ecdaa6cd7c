import { familyBits, formatIp, parseCidr } from '../core/net/ipAddress.js';
import { configuredName } from '../core/dns/name.js';
import { presentData } from '../core/dns/presentation.js';
import { TYPE_CODES, type AnswerRecord, type RecordType } from '../core/dns/records.js';
import { unpackId, unpackPrefix } from '../core/lpm/rangeTable.js';
import { formatQualifiers } from '../core/location/location.js';
import type { AfterAnswerHook } from '../core/contracts/frontDoor.js';
import type { Answer, Query } from '../core/model/query.js';
import { resolve, resolveExplained, type ExplainedDelegation, type ExplainedSelection } from './zones/authoritative.js';
import type { Engine } from './engine.js';

/** The JSON an explain request returns: the query, the client as located, the answer and each selection's trace. */
export interface Explanation {
  query: { name: string; type: string };
  client: { address: string; sourcePrefix: number; fromEcs: boolean; location: string; locationPrefix: number };
  answer: { rcode: number; authoritative: boolean; scope: number; answers: string[]; authority: string[]; additional: string[] };
  selections: ExplainedSelection[];
  /**
   * Each recursive delegation of the answer (`/explain` only, {@link explainQueryFollowing}): the
   * zones asked, the outcome, the sub-tier's answer (records presented as in `answer`) or the zone
   * and data centers that answered instead, and each question sent (name server, transport, rcode, ms).
   */
  delegations?: readonly Record<string, unknown>[];
  /** What each after-answer step did (the DNSSEC signer: which RRsets it signed, from its cache or not); the answer above is after them. */
  afterAnswer: Readonly<Record<string, unknown>>[];
}

/** How the explained query is asked besides its name, type and client. */
export interface ExplainOptions {
  /** The DO bit (RFC 3225): the signer signs only when it is set. Default false, as a query without EDNS. */
  readonly dnssecOk?: boolean;
  /** The after-answer steps the front doors run (the process's), run here after the engine. */
  readonly afterAnswer?: readonly AfterAnswerHook[];
}

/**
 * Explains how the engine would answer `name`/`type` for `client` (an address, or `addr/len` as
 * an ECS source prefix), on the current snapshot, without advancing live rotation state.
 * The name is checked as a configured name is (labels ≤ 63 octets, name ≤ 253, host-name
 * characters; an internationalised name becomes its A-labels), so no name the DNS front door
 * would refuse as FORMERR gets an answer here. The answer is the one the standalone listener
 * would send: after the after-answer steps (`options.afterAnswer`, each through its `explain`
 * when it has one), for a query with or without the DO bit.
 * @throws Error when the name, the type or the client address is invalid.
 */
export function explainQuery(engine: Engine, name: string, type: string, client: string, options: ExplainOptions = {}): Explanation {
  const asked = ask(engine, name, type, client, options);
  return explanation(asked, resolve(asked.query, asked.snap, asked.ctx, asked.selections), options);
}

/**
 * {@link explainQuery} as the front doors answer, for the admin API's `/explain`: a GSLB selection
 * whose best candidates are delegated proximity zones resolved recursively asks the sub-tier
 * (within the delegation budget, through the same resolver and its answer cache, as a trial that
 * neither fills that cache nor counts in the delegation metrics: `ProximityView.delegate`), and the
 * explanation shows the sub-tier's answer in place of the local one, with each delegation in
 * `delegations` (what came back, or the failure and the zone whose data centers answered instead).
 * A promise only when a selection delegates.
 * @throws Error when the name, the type or the client address is invalid.
 */
export function explainQueryFollowing(
  engine: Engine,
  name: string,
  type: string,
  client: string,
  options: ExplainOptions = {},
): Explanation | Promise<Explanation> {
  const asked = ask(engine, name, type, client, options);
  const delegations: ExplainedDelegation[] = [];
  const a = resolveExplained(asked.query, asked.snap, asked.ctx, asked.selections, delegations);
  return a instanceof Promise ? a.then((answer) => explanation(asked, answer, options, delegations)) : explanation(asked, a, options);
}

/** An explain request, parsed: the query, the client, the snapshot and a context whose rotation is a copy. */
interface Asked {
  readonly name: string;
  readonly type: string;
  readonly prefix: ReturnType<typeof parseCidr>;
  readonly query: Query;
  readonly snap: Engine['snapshot'];
  readonly ctx: Engine['ctx'];
  readonly selections: ExplainedSelection[];
}

function ask(engine: Engine, name: string, type: string, client: string, options: ExplainOptions): Asked {
  const qname = configuredName(name);
  const code = /^\d+$/.test(type) ? Number(type) : TYPE_CODES[type.toUpperCase() as RecordType];
  if (code === undefined) throw new Error(`unknown record type "${type}"`);
  const prefix = parseCidr(client);
  const bits = familyBits(prefix.address.family);
  const c = { address: prefix.address, sourcePrefix: prefix.prefix, fromEcs: prefix.prefix < bits };
  const ctx = { ...engine.ctx, rotation: engine.ctx.rotation.clone() };
  const query: Query = { name: qname, type: code, client: c, transport: 'tcp', dnssecOk: options.dnssecOk ?? false };
  return { name, type, prefix, query, snap: engine.snapshot, ctx, selections: [] };
}

function explanation(asked: Asked, answer: Answer, options: ExplainOptions, delegations?: readonly ExplainedDelegation[]): Explanation {
  const { name, type, prefix, query, snap, selections } = asked;
  let a = answer;
  const steps: Readonly<Record<string, unknown>>[] = [];
  for (const hook of options.afterAnswer ?? []) {
    if (!hook.explain) continue;
    const explained = hook.explain(query, a);
    a = explained.answer;
    steps.push(explained.notes);
  }
  const packed = snap.env.geo.lookup(prefix.address);
  const present = (r: AnswerRecord): string => `${r.name}. ${r.ttl} IN ${r.type} ${presentData(r.type, r.data)}`;
  return {
    query: { name, type: type.toUpperCase() },
    client: {
      address: formatIp(prefix.address),
      sourcePrefix: prefix.prefix,
      fromEcs: query.client.fromEcs,
      location: unpackId(packed) === 0 ? 'unknown' : formatQualifiers(snap.env.geo.location(unpackId(packed)).qualifiers),
      locationPrefix: unpackPrefix(packed),
    },
    answer: {
      rcode: a.rcode,
      authoritative: a.authoritative,
      scope: a.scope,
      answers: a.answers.map(present),
      authority: a.authority.map(present),
      additional: a.additional.map(present),
    },
    selections,
    ...(delegations && delegations.length > 0
      ? {
          delegations: delegations.map((d) => ({
            ...d,
            ms: Math.round(d.ms * 10) / 10,
            ...(d.answered ? { answered: { ...d.answered, records: d.answered.records.map(present) } } : {}),
            attempts: d.attempts.map((x) => ({ ...x, ms: Math.round(x.ms * 10) / 10 })),
          })),
        }
      : {}),
    afterAnswer: steps,
  };
}
