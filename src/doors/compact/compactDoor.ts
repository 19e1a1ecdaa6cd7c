import { dirname, resolve as resolvePath } from 'node:path';
import type { FrontDoorHost, FrontDoorKind } from '../../core/contracts/frontDoor.js';
import { CompactServer } from './compactServer.js';
import { compactListenerSchema, type CompactListenerConfig } from './listenerSchema.js';

/** The part of the configuration the compact-protocol listener reads. */
export interface CompactDoorConfig {
  readonly listeners: { readonly compact?: CompactListenerConfig | undefined };
}

/**
 * The compact-protocol listener (CoreDNS bridge) as a front-door kind: `listeners.compact` (its
 * Unix socket, the path relative to the configuration file). Not created when the key is absent.
 */
export const compactDoor = {
  name: 'compact',
  listener: compactListenerSchema
    .optional()
    .describe('The compact-protocol listener the CoreDNS plugin connects to (docs/protocol.md); absent means none; restart needed.'),
  create(config: CompactDoorConfig, host: FrontDoorHost): CompactServer | undefined {
    const cfg = config.listeners.compact;
    if (!cfg) return undefined;
    const { engine, metrics, log, afterAnswer } = host;
    return new CompactServer({ engine, metrics, log, afterAnswer }, cfg, resolvePath(dirname(host.file), cfg.path));
  },
} as const satisfies FrontDoorKind<CompactDoorConfig, FrontDoorHost>;
