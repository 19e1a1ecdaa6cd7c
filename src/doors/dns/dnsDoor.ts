import type { FrontDoorHost, FrontDoorKind } from '../../core/contracts/frontDoor.js';
import { DnsServer } from './dnsServer.js';
import { dnsListenersSchema, dnsRootSchema, type DnsBehaviourConfig, type DnsListenerConfig } from './listenerSchema.js';

/** The part of the configuration the standalone listener reads. */
export interface DnsDoorConfig {
  readonly listeners: { readonly dns: readonly DnsListenerConfig[] };
  readonly dns: DnsBehaviourConfig;
}

/**
 * The standalone DNS listener as a front-door kind: `listeners.dns` (a list of addresses) and
 * the root `dns` key (its behaviour). Always created: with no address it binds nothing, and the
 * `gslbd up` line says `dns: []`.
 */
export const dnsDoor = {
  name: 'dns',
  listener: dnsListenersSchema,
  root: { dns: dnsRootSchema },
  create(config: DnsDoorConfig, host: FrontDoorHost): DnsServer {
    const { engine, metrics, log, afterAnswer } = host;
    return new DnsServer({ engine, metrics, log, afterAnswer, behaviour: config.dns }, config.listeners.dns);
  },
} as const satisfies FrontDoorKind<DnsDoorConfig, FrontDoorHost>;
