import test from 'ava';
import { canonicalEndpointKey } from './healthRoutes.js';

test('override keys: the address part in any spelling names the canonical key; targets and names are kept', (t) => {
  t.is(canonicalEndpointKey('web/us-east/2001:DB8:0::0001'), 'web/us-east/2001:db8::1');
  t.is(canonicalEndpointKey('web/us-east/0:0:0:0:0:0:0:1'), 'web/us-east/::1');
  t.is(canonicalEndpointKey('web/us-east/::FFFF:192.0.2.1'), 'web/us-east/::ffff:192.0.2.1');
  t.is(canonicalEndpointKey('web/us-east/192.0.2.10'), 'web/us-east/192.0.2.10');
  t.is(canonicalEndpointKey('mail/us-east/mx1.example.test:25'), 'mail/us-east/mx1.example.test:25');
  t.is(canonicalEndpointKey('web/us-east/fe80::1%eth0'), 'web/us-east/fe80::1%eth0', 'not an address of the configuration: left to the 404');
  t.is(canonicalEndpointKey('nonsense'), 'nonsense');
});
