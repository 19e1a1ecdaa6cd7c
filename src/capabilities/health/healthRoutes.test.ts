import test from 'ava';
import { canonicalEndpointKey } from './healthRoutes.js';

test('override keys: the address part in any spelling names the canonical key; targets and names are kept', (t) => {
  const cases: [key: string, canonical: string][] = [
    ['web/us-east/2001:DB8:0::0001', 'web/us-east/2001:db8::1'],
    ['web/us-east/0:0:0:0:0:0:0:1', 'web/us-east/::1'],
    ['web/us-east/::FFFF:192.0.2.1', 'web/us-east/::ffff:192.0.2.1'],
    ['web/us-east/192.0.2.10', 'web/us-east/192.0.2.10'],
    ['mail/us-east/mx1.example.test:25', 'mail/us-east/mx1.example.test:25'],
    // A zone index is in no configured address: the key stays as sent and answers 404.
    ['web/us-east/fe80::1%eth0', 'web/us-east/fe80::1%eth0'],
    ['nonsense', 'nonsense'],
  ];
  for (const [key, canonical] of cases) t.is(canonicalEndpointKey(key), canonical, key);
});
