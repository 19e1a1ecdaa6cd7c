/**
 * The `app` service of seed 002's preferred-locations example (docs/PRODUCT.md, Sources): one endpoint in each of its eight
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

/**
 * Seed 002's eight data centers with the coordinates of their cities, as a whole top-level
 * `datacenters:` section of YAML (no trailing newline), for configurations whose static
 * proximity needs distances (the policies benchmark, the decision cache's differential test).
 */
export const SEED002_DATACENTERS_WITH_COORDINATES = `datacenters:
  - { name: in, location: Asia.IN, lat: 19.1, lon: 72.9 }
  - { name: jpn, location: Asia.jpn, lat: 35.7, lon: 139.7 }
  - { name: hk, location: Asia.HK, lat: 22.3, lon: 114.2 }
  - { name: uk, location: Europe.UK, lat: 51.5, lon: -0.1 }
  - { name: ru, location: Europe.RU, lat: 55.8, lon: 37.6 }
  - { name: eg, location: Europe.EG, lat: 30.0, lon: 31.2 }
  - { name: sd, location: Africa.SD, lat: 15.6, lon: 32.5 }
  - { name: zmb, location: Africa.zmb, lat: -15.4, lon: 28.3 }`;

/**
 * The `pref` record of issue 6's benchmark (8 data centers of the `app` service, 2 DNS policies: a
 * view to `uk` for 10/8, 172.16/12 and fc00::/7, preferred locations "Asia.HK", "Europe.UK" for
 * clients in Africa, else static proximity), as one item of a `records:` list, and the two
 * actions it names as items of an `actions:` list (no trailing newlines).
 */
export const PREF_RECORD = `  - name: pref.example.test
    type: A
    service: app
    policies:
      rules:
        - { name: internal, when: { clientSubnet: [10.0.0.0/8, 172.16.0.0/12, "fc00::/7"] }, action: internal-view }
        - { name: africa, when: { clientLocation: Africa }, action: prefLoc11 }`;
export const PREF_ACTIONS = `  - { name: prefLoc11, type: preferred-locations, locations: ["Asia.HK", "Europe.UK"] }
  - { name: internal-view, type: view, dcs: [uk] }`;
