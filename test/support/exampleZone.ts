/**
 * The zone test configurations serve unless they need more: `example.test` with its SOA and NS
 * (`ns1.example.test`), no records of its own, as a whole top-level `zones:` section of YAML
 * (no trailing newline, so it stands on its own line in a template).
 */
export const EXAMPLE_ZONE = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]`;
