import test from 'ava';
import { changedRestartSettings } from '../core/config/restartOnly.js';
import { configSchema, RESTART_SETTINGS } from './configSchema.js';

/** The restart-only settings come from the schemas: the listeners, the log line format, the shared state store; not the admin token or the log level. */

test('the configuration schema marks the listeners, the log line format and the shared state store as restart-only', (t) => {
  const paths = RESTART_SETTINGS.map((s) => s.path.join('.'));
  for (const p of [
    'listeners.dns',
    'listeners.powerdns',
    'listeners.compact',
    'listeners.redirect',
    'listeners.admin.address',
    'listeners.admin.port',
    'listeners.admin.tls',
    'logging.time',
    'logging.levels',
    'store',
    'dns.fastPath',
  ])
    t.true(paths.includes(p), p);
  for (const p of ['listeners.admin.token', 'listeners.admin.tokenFile', 'logging.level', 'dns.queryLogSampleRate', 'dns.udpPayloadSize'])
    t.false(paths.includes(p), p);
});

const base = {
  listeners: { dns: [{ address: '127.0.0.1', port: 5300 }], admin: { port: 8053, token: 'a-token-of-16-chars-at-least' } },
  zones: [{ name: 'example.test', ns: ['ns1.example.test'], soa: { mname: 'ns1.example.test', rname: 'hostmaster.example.test' } }],
};

test('a reload that changes several restart-only settings names each; the token and the level are applied, not warned about', (t) => {
  const before = configSchema.parse(base);
  const reloadable = configSchema.parse({
    ...base,
    listeners: { ...base.listeners, admin: { port: 8053, token: 'another-token-of-16-chars' } },
    logging: { level: 'debug' },
    dns: { queryLogSampleRate: 1, udpPayloadSize: 1400 },
  });
  t.deepEqual(changedRestartSettings(RESTART_SETTINGS, before, reloadable), []);
  const after = configSchema.parse({
    ...base,
    listeners: { dns: [{ address: '127.0.0.1', port: 5301 }], admin: { port: 8054, token: 'a-token-of-16-chars-at-least' } },
    logging: { time: 'iso', levels: 'names' },
  });
  t.deepEqual(
    changedRestartSettings(RESTART_SETTINGS, before, after).map((s) => s.path.join('.')),
    ['listeners.dns', 'listeners.admin.port', 'logging.time', 'logging.levels'],
  );
});
