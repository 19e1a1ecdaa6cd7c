import test from 'ava';
import { parseShowInfo, parseShowStat, serverHealthy } from './haproxyStats.js';

test('show stat is read by column name; an error reply throws', (t) => {
  const rows = parseShowStat('# pxname,svname,status,weight,scur,\nbe,s1,UP,1,3,\nbe,BACKEND,UP,1,3,\n\n');
  t.deepEqual(rows[0], { pxname: 'be', svname: 's1', status: 'UP', weight: '1', scur: '3', '': '' });
  t.is(rows.length, 2);
  t.throws(() => parseShowStat('Unknown command.\n'), { message: /not a "show stat" reply/ });
});

test('show info lines become a map', (t) => {
  t.is(parseShowInfo('Name: HAProxy\nPid: 4242\n').get('Pid'), '4242');
});

test('a healthy backend server is UP (or going down, or without checks) with weight > 0; DOWN, NOLB, DRAIN, MAINT and weight 0 do not count', (t) => {
  const healthy = (status: string, weight = '1'): boolean => serverHealthy({ status, weight });
  t.true(healthy('UP'));
  t.true(healthy('UP 1/3'));
  t.true(healthy('no check'));
  t.false(healthy('UP', '0'));
  for (const s of ['DOWN', 'DOWN 1/2', 'NOLB', 'DRAIN', 'MAINT', 'MAINT (via be/s2)', 'MAINT (resolution)']) t.false(healthy(s), s);
});
