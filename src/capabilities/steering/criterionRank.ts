import { formatIp, maskAddress } from '../../core/net/ipAddress.js';
import { clientNetworkKey, type MetricSource } from '../../core/views/metricView.js';
import { describeCriterion, rankByCriterion, type Criterion } from './criterion.js';
import { clientNetworkPrefix } from '../../pipeline/selection/tieBreakHash.js';
import { narrowScope, selectionNow, type LiveDc, type SelectionState, type Stage } from '../../pipeline/selection/stage.js';

/** What a multi-source rank stage ranks by. */
export interface CriterionRankOptions {
  readonly source: MetricSource;
  /** Metric id in the source's catalog and its name (`service.healthyBackends`). */
  readonly metric: number;
  readonly metricName: string;
  /** The service whose metrics count (service source); ignored for host and client. */
  readonly service: string;
  readonly criterion: Criterion;
  readonly unknown: 'rank-last' | 'exclude';
}

/**
 * `rank` by a metric and a criterion (docs/PRODUCT.md §3 multi-source selection): reads the metric of every
 * live data center (host: per DC; service: per (service, DC); client: per (client network, DC)),
 * ranks the known values by the criterion (criterion.ts), and places data centers whose value is
 * unknown (never received or stale) in one group after them (`unknown: rank-last`) or drops them
 * (`exclude`). Data centers a gate demoted follow, ranked the same way among themselves.
 *
 * Client metrics make the decision depend on the client network, so the ECS scope narrows to the
 * client network length (/24 and /48 by default) whenever they are read.
 */
export function criterionRankStage(o: CriterionRankOptions): Stage {
  const criterion = describeCriterion(o.criterion);
  return {
    slot: 'rank',
    name: 'multi-source',
    cacheable: 'it ranks by live metrics',
    run(s) {
      if (s.live.length === 0 && s.demoted.length === 0) return;
      const now = selectionNow(s);
      const subject = subjectOf(o, s, now);
      const groups = tier(s.live, o, s, subject, now);
      if (s.demoted.length > 0) for (const g of tier(s.demoted, o, s, subject, now)) groups.push(g);
      s.ranked = groups;
      if (s.trace) {
        const groupOf = (l: LiveDc): number | null => {
          const i = groups.findIndex((g) => g.includes(l));
          return i < 0 ? null : i;
        };
        s.trace.step('multi-source', {
          source: o.source,
          metric: o.metricName,
          criterion,
          unknown: o.unknown,
          ...(o.source === 'client' ? { clientNetwork: `${formatIp(maskAddress(s.client.address, clientNetworkPrefix(s)))}/${clientNetworkPrefix(s)}` } : {}),
          dcs: [...s.live, ...s.demoted].map((l) => {
            const reading = s.env.metrics.describe(o.source, subject, l.candidate.dc.name, o.metric, now);
            const group = groupOf(l);
            return { dc: l.candidate.dc.name, ...reading, rankGroup: group, note: note(group, reading.value === undefined, s.demoted.includes(l), o) };
          }),
          groups: groups.map((g) => g.map((l) => l.candidate.dc.name)),
        });
      }
    },
  };
}

/**
 * The subject the metric is kept under; reading client metrics narrows the ECS scope and notes
 * the client for the agents' probe-request queue (not for /explain, which changes nothing, nor
 * for an unasked answer: `ResolveContext.unasked`).
 */
function subjectOf(o: CriterionRankOptions, s: SelectionState, now: number): string | number {
  if (o.source === 'host') return '';
  if (o.source === 'service') return o.service;
  narrowScope(s, clientNetworkPrefix(s));
  if (s.env.probes !== undefined && s.trace === undefined && s.env.ctx.unasked !== true) s.env.probes.note(s.client, now);
  return clientNetworkKey(s.client.address, s.env.metrics.clientNetworkPrefix);
}

/**
 * The data centers with a known value and their values, for {@link tier}: reused by every call
 * (each fills and ranks them within the call, and rankByCriterion copies what it keeps), so a
 * query allocates no lists for them.
 */
let knownScratch: LiveDc[] = new Array<LiveDc>(16);
let valueScratch = new Float64Array(16);

/** Rank groups of one tier: known values by the criterion, then unknown ones (rank-last). */
function tier(dcs: readonly LiveDc[], o: CriterionRankOptions, s: SelectionState, subject: string | number, now: number): LiveDc[][] {
  if (knownScratch.length < dcs.length) {
    knownScratch = new Array<LiveDc>(2 * dcs.length);
    valueScratch = new Float64Array(2 * dcs.length);
  }
  const known = knownScratch;
  const values = valueScratch;
  let n = 0;
  let unknown: LiveDc[] | undefined;
  for (let i = 0; i < dcs.length; i++) {
    const l = dcs[i]!;
    const value = s.env.metrics.read(o.source, subject, l.candidate.dc.name, o.metric, now);
    if (!Number.isNaN(value)) {
      known[n] = l;
      values[n++] = value;
    } else if (o.unknown === 'rank-last') {
      (unknown ??= []).push(l);
    }
  }
  const groups = rankByCriterion(known, values, o.criterion, n).groups;
  // Dropped at once, so the scratch never keeps a replaced snapshot's data centers alive.
  known.fill(undefined as unknown as LiveDc, 0, n);
  if (unknown) groups.push(unknown);
  return groups;
}

function note(group: number | null, unknownValue: boolean, demoted: boolean, o: CriterionRankOptions): string {
  const prefix = demoted ? 'gate unknown: ranked after every gated-in DC; ' : '';
  if (unknownValue) return `${prefix}metric unknown: ${o.unknown === 'rank-last' ? 'ranked last' : 'excluded'}`;
  if (group === null) return `${prefix}ranked out by the criterion`;
  return `${prefix}ranked by value`;
}
