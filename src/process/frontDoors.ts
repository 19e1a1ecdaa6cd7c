import { adminListener } from '../admin/listenerSchema.js';
import { compactDoor } from '../doors/compact/compactDoor.js';
import { dnsDoor } from '../doors/dns/dnsDoor.js';
import { powerdnsDoor } from '../doors/powerdns/powerdnsDoor.js';
import { redirectDoor } from '../doors/redirect/redirectDoor.js';

/**
 * Every key of the configuration's `listeners` section, in the order `gslbd schema` shows them:
 * the front-door kinds and the admin listener. Adding a front door is one folder in `src/doors/`
 * and one line here (`src/doors/README.md`).
 */
export const LISTENERS = [dnsDoor, adminListener, redirectDoor, powerdnsDoor, compactDoor] as const;
