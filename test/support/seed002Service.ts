/**
 * The `app` service of seed 002's preferred-locations example: one endpoint in each of its eight
 * data centers (`in`, `jpn`, `hk`, `uk`, `ru`, `eg`, `sd`, `zmb` → 192.0.2.1 … 192.0.2.8, in that
 * order), as a whole top-level `services:` section of YAML (no trailing newline, so it stands on
 * its own line in a template). The data centers themselves differ by test (with or without
 * coordinates), so they stay with each configuration.
 */
export const SEED002_APP_SERVICE = `services:
  - name: app
    endpoints:
      - { dc: in, address: 192.0.2.1 }
      - { dc: jpn, address: 192.0.2.2 }
      - { dc: hk, address: 192.0.2.3 }
      - { dc: uk, address: 192.0.2.4 }
      - { dc: ru, address: 192.0.2.5 }
      - { dc: eg, address: 192.0.2.6 }
      - { dc: sd, address: 192.0.2.7 }
      - { dc: zmb, address: 192.0.2.8 }`;
