import test from 'ava';
import { request, type ServerResponse } from 'node:http';
import { emptyLocationDb } from '../core/location/locationDb.js';
import { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import { createLogger } from '../core/telemetry/logger.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { Engine } from '../pipeline/engine.js';
import { compileSnapshot, type Snapshot } from '../pipeline/snapshot.js';
import { CAPABILITIES } from '../process/capabilities.js';
import type { Config } from '../process/configSchema.js';
import { parseConfigText } from '../process/loadConfig.js';
import { largeConfig } from '../../test/support/largeConfig.js';
import { dcsDown, fixedContext } from '../../test/support/selectionFixture.js';
import { ADMIN_LIMITS, AdminServer } from './adminServer.js';
import { coreRoutes } from './coreRoutes.js';

/**
 * Issue 17: `GET /status` of 20,000 records wrote 3.5 MB of JSON in one turn of the event loop,
 * and no front door answered a query meanwhile; a console's update with 20,000 records in their
 * fail-safe fallback, 3.7 MB. These tests count turns, never time: a reply written in one go
 * gives other events no turn between the request and its headers (or the event's first write),
 * whatever the machine's speed.
 */

const RECORDS = 4000;
const snapshot = compileSnapshot<Config>({
  file: 'gslbd.yaml',
  config: parseConfigText(largeConfig({ records: RECORDS })),
  capabilities: CAPABILITIES,
  state: { geo: emptyLocationDb(), health: dcsDown(), metrics: emptyMetricView },
  nowMs: 1_700_000_000_000,
});

/** The `/status` object as the route built it before issue 17, written in one `JSON.stringify` call. */
function statusBefore(s: Snapshot): object {
  return {
    status: 'ok',
    reasons: [],
    generation: s.generation,
    configFile: s.file,
    loadedAt: new Date(s.loadedAtMs).toISOString(),
    zones: [...s.zones.zones].map((z) => ({ name: z.name, serial: z.soa.data.serial, names: z.nodes.size })),
    records: s.records.map((r) => ({ name: r.name, type: r.type, service: r.service, dcs: r.candidates.map((c) => c.dc.name) })),
    datacenters: s.dataCenters.map((d) => d.name),
    location: s.env.geo.describe(),
    health: s.env.health.description,
  };
}

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { connection: 'close' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end();
  });
}

test('GET /status of a large configuration gives other events turns before its reply, and its body is the one written in one go', async (t) => {
  // Slices of 0 ms: each step of the reply is a slice, and other events run after each.
  const admin = new AdminServer(undefined, createLogger('silent'), undefined, { ...ADMIN_LIMITS, replySliceMs: 0 });
  const engine = new Engine(snapshot, fixedContext(), createLogger('silent'));
  for (const r of coreRoutes({ engine, metrics: new EngineMetrics(), reload: () => Promise.reject(new Error('no reload in this test')) })) admin.route(r);
  await admin.start('127.0.0.1', 0);
  t.teardown(() => admin.stop());
  let reply: ServerResponse | undefined;
  admin.listening!.on('request', (_req, res: ServerResponse) => (reply = res));
  let turns = 0;
  const ticker = setInterval(() => {
    if (reply && !reply.headersSent) turns++;
  }, 0);
  const body = await get(admin.port, '/status');
  clearInterval(ticker);
  t.is(body, `${JSON.stringify(statusBefore(snapshot), null, 2)}\n`);
  // 4,000 records of 7 JSON values each are 27 runs of 1,024 values (JSON_MEMBERS_PER_STEP), one
  // step each. Written in one go (before issue 17) other events ran 0 times; the bound is a
  // quarter of the steps, as in src/process/reloadSlices.test.ts.
  t.log(`other events ran ${turns} times before the reply`);
  t.true(turns >= Math.floor((RECORDS * 7) / 1024 / 4), `other events ran ${turns} times before the reply`);
});

test('an event of a large state gives other events turns before it is written, and its data line is JSON.stringify of the state', async (t) => {
  const admin = new AdminServer(undefined, createLogger('silent'), undefined, { ...ADMIN_LIMITS, replySliceMs: 0 });
  const state = { records: statusBefore(snapshot) };
  let subscribed = 0;
  let turnsAtSubscribe = 0;
  admin.stream({
    path: '/events',
    subscribe(send) {
      turnsAtSubscribe = turns;
      subscribed++;
      send('state', state);
      return () => undefined;
    },
  });
  await admin.start('127.0.0.1', 0);
  t.teardown(() => admin.stop());
  let turns = 0;
  let turnsAtWrite: number | undefined;
  // Before the listener's own handler, which may write in the same turn.
  admin.listening!.prependListener('request', (_req, res: ServerResponse) => {
    const write = res.write.bind(res) as (chunk: string) => boolean;
    res.write = ((chunk: string) => {
      if (turnsAtWrite === undefined && chunk.startsWith('event: state')) turnsAtWrite = turns;
      return write(chunk);
    }) as typeof res.write;
  });
  const ticker = setInterval(() => turns++, 0);
  const text = await new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: admin.port, path: '/events' }, (res) => {
      let received = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        received += c;
        if (received.endsWith('}\n\n')) {
          req.destroy();
          resolve(received);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
  clearInterval(ticker);
  t.is(subscribed, 1);
  t.is(text, `: gslbd\n\nevent: state\ndata: ${JSON.stringify(state)}\n\n`);
  const waited = turnsAtWrite! - turnsAtSubscribe;
  t.log(`other events ran ${waited} times before the event was written`);
  // Written in one go (before issue 17) other events ran 0 times; 27 steps, a quarter as the bound.
  t.true(waited >= Math.floor((RECORDS * 7) / 1024 / 4), `other events ran ${waited} times before the event was written`);
});
