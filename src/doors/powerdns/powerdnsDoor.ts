import { dirname, resolve as resolvePath } from 'node:path';
import type { FrontDoorKind } from '../../core/contracts/frontDoor.js';
import type { DoorHost } from '../doorHost.js';
import { powerdnsListenerSchema, type PowerdnsListenerConfig } from './listenerSchema.js';
import { powerDnsFrontDoor, type RemoteBackendServer } from './remoteBackendServer.js';

/** The part of the configuration the PowerDNS remote backend reads. */
export interface PowerdnsDoorConfig {
  readonly listeners: { readonly powerdns?: PowerdnsListenerConfig | undefined };
}

/**
 * The PowerDNS remote backend as a front-door kind: `listeners.powerdns` (its Unix socket, the
 * path relative to the configuration file). Not created when the key is absent. PowerDNS signs
 * answers itself, so the host's after-answer hooks do not apply here; the host's signing keys
 * (`zoneKeys`) are what its remote backend hands PowerDNS for live signing.
 */
export const powerdnsDoor = {
  name: 'powerdns',
  listener: powerdnsListenerSchema.optional().describe('The PowerDNS remote backend front door (Unix socket); absent means none; restart needed.'),
  create(config: PowerdnsDoorConfig, host: DoorHost): RemoteBackendServer | undefined {
    const cfg = config.listeners.powerdns;
    if (!cfg) return undefined;
    return powerDnsFrontDoor(host.engine, host.metrics, host.log, cfg, resolvePath(dirname(host.file), cfg.path), host.zoneKeys);
  },
} as const satisfies FrontDoorKind<PowerdnsDoorConfig, DoorHost>;
