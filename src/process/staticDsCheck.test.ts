import test from 'ava';
import { parseConfigWith } from '../core/config/load.js';
import { configSchema } from './configSchema.js';

/** A static DS at a delegation: served from an unsigned zone, refused in a signed one (its referrals deny a DS). */
const config = (signed: boolean): string => `
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records:
      - { name: child, type: NS, data: ns1.child.example.test }
      - { name: child, type: DS, data: "60485 13 2 2BB183AF5F22588179A53B0A98631FAD1A292118A5F84E1F3A62E9A04A5B2C4C" }
${signed ? 'dnssec:\n  zones:\n    - { zone: example.test, keys: [Kexample.test.+013+12345] }' : ''}
`;

test('a static DS is a configuration error in a signed zone only', (t) => {
  t.notThrows(() => parseConfigWith(configSchema, config(false)));
  t.throws(() => parseConfigWith(configSchema, config(true)), {
    message: /zones\[0\]\.records\[1\]\.type.*DS record in the signed zone "example.test" is not supported yet/s,
  });
});
