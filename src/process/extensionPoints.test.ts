import test from 'ava';
import { z } from 'zod';
import { presentData } from '../core/dns/presentation.js';
import { balanceCapability } from '../capabilities/balance/capability.js';
import { BALANCE_ALGORITHMS } from '../capabilities/balance/registry.js';
import { parseConfigWith } from '../core/config/load.js';
import { TYPE_CODES } from '../core/dns/records.js';
import { parseIp } from '../core/net/ipAddress.js';
import { allUpHealthView } from '../core/views/healthView.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { emptyLocationDb } from '../core/location/locationDb.js';
import type { Capability } from '../pipeline/capability.js';
import { composeConfigSchema } from '../pipeline/composeSchema.js';
import { oneEndpointAlgorithm } from '../pipeline/selection/balanceAlgorithm.js';
import type { Stage } from '../pipeline/selection/stage.js';
import { compileSnapshot } from '../pipeline/snapshot.js';
import { resolve } from '../pipeline/zones/authoritative.js';
import { fixedContext } from '../../test/support/selectionFixture.js';
import { CAPABILITIES } from './capabilities.js';
import { configSchema } from './configSchema.js';

/**
 * The extension points of docs/ARCHITECTURE.md ("Adding a capability"), each proven by composing a
 * list with one more entry and nothing else: a balance algorithm (one more line of the balance
 * registry) and a capability with its own configuration key and stage (one more line of the
 * capability list). Check kinds, location formats and front doors have theirs beside their lists
 * (`checkKinds.test.ts`, `locationFormats.test.ts`, `frontDoors.test.ts`).
 */

const ZONE = `
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters:
  - { name: east }
  - { name: west }
services:
  - name: web
    endpoints:
      - { dc: east, address: 192.0.2.1 }
      - { dc: east, address: 192.0.2.2 }
      - { dc: west, address: 192.0.2.3 }
`;

const KEY_ORDER: readonly string[] = [];
const client = { address: parseIp('198.51.100.7'), sourcePrefix: 32, fromEcs: false };

/** Answers `name` A with a snapshot of `text` composed from `capabilities`. */
function answer(capabilities: readonly Capability<never>[], text: string, name: string): string[] {
  const schema = composeConfigSchema(capabilities, {}, KEY_ORDER);
  const config = parseConfigWith(schema, text) as never;
  const snap = compileSnapshot({
    file: '<test>',
    config,
    capabilities: capabilities as never,
    state: { geo: emptyLocationDb(), health: allUpHealthView, metrics: emptyMetricView },
    nowMs: 0,
  });
  return resolve({ name, type: TYPE_CODES.A, client, transport: 'udp' }, snap, fixedContext()).answers.map((r) => presentData(r.type, r.data));
}

test('a balance algorithm is one more line of the balance registry', (t) => {
  // Always the last live endpoint of the data center: unlike every shipped algorithm.
  const lastOne = oneEndpointAlgorithm('last-one', (dc) => dc.endpoints[dc.endpoints.length - 1]!);
  const withIt = CAPABILITIES.map((c) => (c === balanceCapability ? { ...balanceCapability, balanceAlgorithms: [...BALANCE_ALGORITHMS, lastOne] } : c));
  const text = `${ZONE}records:\n  - { name: www.example.test, type: A, service: web, policy: { type: static, rules: [{ dcs: [east] }], balanceAlgorithm: last-one } }\n`;
  t.deepEqual(answer(withIt, text, 'www.example.test'), ['192.0.2.2']);
  t.throws(() => parseConfigWith(configSchema, text), { message: /balanceAlgorithm: Invalid option/ });
});

test('a capability with its own configuration key and stage is one more line of the capability list', (t) => {
  // `avoid: [dc, …]` on a record keeps those data centers out of its answers: a gate-slot stage.
  const avoidCapability = {
    name: 'avoid',
    schema: { record: { avoid: z.array(z.string()).default([]) } },
    stages({ record }): Stage[] {
      const avoid = new Set((record as { avoid: string[] }).avoid);
      if (avoid.size === 0) return [];
      return [
        {
          slot: 'gate',
          name: 'avoid',
          cacheable: true,
          run(s) {
            s.live = s.live.filter((l) => !avoid.has(l.candidate.dc.name));
          },
        },
      ];
    },
  } satisfies Capability<{ records: readonly unknown[] }>;
  const text = `${ZONE}records:\n  - { name: www.example.test, type: A, service: web, avoid: [east], policy: { type: static-proximity, balanceAlgorithm: all } }\n  - { name: all.example.test, type: A, service: web, policy: { type: static-proximity, pickDcCount: 2, balanceAlgorithm: all } }\n`;
  const withIt = [...CAPABILITIES, avoidCapability];
  t.deepEqual(answer(withIt, text, 'www.example.test'), ['192.0.2.3']);
  t.deepEqual(answer(withIt, text, 'all.example.test'), ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
  t.throws(() => parseConfigWith(configSchema, text), { message: /records\[0\]\.avoid: unknown key/ });
});
