import test from 'ava';
import { allUpHealthView, endpointsDownView } from '../../core/views/healthView.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { largeConfig } from '../../../test/support/largeConfig.js';
import { buildHealthPlan, type HealthPlan } from './healthPlan.js';
import { healthReportSteps, REPORT_STEP, type HealthReportInput } from './healthReport.js';

/**
 * Issue 17: `GET /health` described every endpoint in one turn (15,000 endpoints: 10-20 ms). The
 * report is built in steps; this test counts endpoints read between two yields, not time.
 */

const SERVICES = 1000;
const plan = buildHealthPlan(parseConfigText(largeConfig({ records: 10, services: SERVICES })));
const STATE_FILE = { path: null, atStart: { used: false } };

/** The report as it was built in one go before issue 17 (no check runs here). */
function reportBefore({ plan, view }: { plan: HealthPlan; view: HealthReportInput['view'] }): unknown {
  const services = new Map<string, Set<string>>();
  for (const e of plan.endpoints) {
    let dcs = services.get(e.service);
    if (!dcs) services.set(e.service, (dcs = new Set()));
    dcs.add(e.dc);
  }
  return {
    stateFile: STATE_FILE,
    endpoints: plan.endpoints.map((e) => {
      const h = view.endpointHealth(e.key);
      return {
        endpoint: e.key,
        status: h.status,
        override: h.override ?? null,
        since: h.sinceMs > 0 ? new Date(h.sinceMs).toISOString() : null,
        checks: e.checks,
      };
    }),
    checks: [],
    datacenters: plan.dcs.map((d) => ({ dc: d.name, status: view.hostStatus(d.name), rule: d.rule, wan: d.wan, lan: d.lan })),
    services: [...services].flatMap(([service, dcs]) => [...dcs].map((dc) => ({ service, dc, status: view.serviceStatus(service, dc) }))),
  };
}

test('the health report reads at most REPORT_STEP endpoints between two yields, and equals the report built in one go', (t) => {
  for (const view of [allUpHealthView, endpointsDownView(['svc3/eu-west/10.0.3.2'])]) {
    let reads = 0;
    const endpoints = new Proxy(plan.endpoints, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const steps = healthReportSteps({ plan: { ...plan, endpoints }, view, checks: [], stateFile: STATE_FILE, nowMs: 0 });
    let most = 0;
    let yields = 0;
    let report;
    for (;;) {
      reads = 0;
      const next = steps.next();
      most = Math.max(most, reads);
      if (next.done) {
        report = next.value;
        break;
      }
      yields++;
    }
    t.true(most <= REPORT_STEP, `${most} endpoints read in one step`);
    t.true(yields >= (3 * SERVICES) / REPORT_STEP, `${yields} yields`);
    t.deepEqual(report, reportBefore({ plan, view }));
    t.is(report.endpoints.length, 3 * SERVICES);
  }
});
