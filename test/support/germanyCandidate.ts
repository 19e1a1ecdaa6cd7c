import { openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { ipLocationRecord, writeMmdb } from './mmdbWriter.js';

/**
 * The configuration of the query-file replay tests: `www.example.test` answers German clients
 * (`*.DE`) from `germany` and everyone else from `west`; locations from `clients.mmdb` beside it.
 */
function germanyConfig(germany: 'east' | 'west'): string {
  return `listeners: { dns: [{ address: 127.0.0.1, port: 0 }], admin: { address: 127.0.0.1, port: 0 } }
geo: { sources: [{ format: mmdb, path: clients.mmdb }] }
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters: [{ name: east }, { name: west }]
services: [{ name: web, endpoints: [{ dc: east, address: 192.0.2.1 }, { dc: west, address: 192.0.2.2 }] }]
records:
  - name: www.example.test
    type: A
    service: web
    policy:
      type: static
      rules:
        - { when: { clientLocation: ["*.DE"] }, dcs: [${germany}] }
        - { dcs: [west] }
`;
}

/**
 * Writes into `dir` the location file (10.1.0.0/16 in Germany, 10.2.0.0/16 in the United States),
 * `gslbd.yaml` (Germany answered from east) and `candidate.yaml` (Germany moved to west), and
 * starts an engine on `gslbd.yaml` logging to `gslbd.log`: a candidate that moves exactly the
 * German client networks, for `gslbd simulate` and `gslbd ctl what-if` over each query-file format.
 */
export async function startGermanyCandidateBed(dir: string): Promise<RunningGslbd> {
  writeMmdb(join(dir, 'clients.mmdb'), 4, [
    { cidr: '10.1.0.0/16', record: ipLocationRecord('DE', 'Berlin', 'Berlin', 52.52, 13.4) },
    { cidr: '10.2.0.0/16', record: ipLocationRecord('US', 'Virginia', 'Ashburn', 39.04, -77.49) },
  ]);
  writeFileSync(join(dir, 'gslbd.yaml'), germanyConfig('east'));
  writeFileSync(join(dir, 'candidate.yaml'), germanyConfig('west'));
  return startGslbd(join(dir, 'gslbd.yaml'), { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
}
