import { readFileSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import type { DoorFileReference, FrontDoorKind } from '../../core/contracts/frontDoor.js';
import type { DoorHost } from '../doorHost.js';
import { redirectListenerSchema } from './listenerSchema.js';
import { checkRedirectReferences, type RedirectDoorConfig } from './redirectReferences.js';
import { RedirectServer } from './redirectServer.js';

/**
 * The HTTP redirect front door as a front-door kind (docs/PRODUCT.md §6): `listeners.redirect`
 * (address, port, TLS files, hosts and their sites' URLs, trusted proxies, limits). Not created
 * when the key is absent. Its hosts' records and data centers are checked at load
 * ({@link checkRedirectReferences}), its TLS files by `check-config`; a permanent status (301,
 * 308) is accepted with a warning at start-up, since browsers keep a permanent redirect and would
 * stay pinned to one site past a failover.
 */
export const redirectDoor = {
  name: 'redirect',
  listener: redirectListenerSchema.optional().describe('The HTTP redirect front door (docs/PRODUCT.md §6); absent means none; restart needed.'),
  check: checkRedirectReferences,
  files(config: RedirectDoorConfig): readonly DoorFileReference[] {
    const tls = config.listeners.redirect?.tls;
    if (!tls) return [];
    return [
      { key: 'listeners.redirect.tls.certFile', path: tls.certFile },
      { key: 'listeners.redirect.tls.keyFile', path: tls.keyFile },
    ];
  },
  create(config: RedirectDoorConfig, host: DoorHost): RedirectServer | undefined {
    const cfg = config.listeners.redirect;
    if (!cfg) return undefined;
    if (cfg.status === 301 || cfg.status === 308) {
      host.log.warn(
        { status: cfg.status },
        'listeners.redirect.status: browsers keep a permanent redirect and would stay on one site after a failover; 302 or 307 are safer',
      );
    }
    const file = (path: string): Buffer => readFileSync(resolvePath(dirname(host.file), path));
    return new RedirectServer(cfg, host, cfg.tls ? { cert: file(cfg.tls.certFile), key: file(cfg.tls.keyFile) } : undefined);
  },
} as const satisfies FrontDoorKind<RedirectDoorConfig, DoorHost>;
