import test from 'ava';
import fc from 'fast-check';
import { encodeTarget, redirectUrl, requestTarget } from './requestTarget.js';

test('origin form: the host from the one Host header, canonical, port dropped; the path as sent', (t) => {
  t.deepEqual(requestTarget('/a/b?x=1', ['www.example.test']), { ok: true, host: 'www.example.test', path: '/a/b?x=1' });
  t.deepEqual(requestTarget('/', ['WWW.Example.TEST.:8080']), { ok: true, host: 'www.example.test', path: '/' });
  t.deepEqual(requestTarget('//evil.example/x', ['www.example.test']), { ok: true, host: 'www.example.test', path: '//evil.example/x' });
  t.deepEqual(requestTarget('/', ['[::1]:80']), { ok: true, host: '[::1]', path: '/' });
});

test('origin form: no Host, several, or one that is not host[:port] is refused', (t) => {
  for (const [hosts, reason] of [
    [undefined, 'no Host header'],
    [[], 'no Host header'],
    [['www.example.test', 'evil.example'], 'several Host headers'],
    [['www.example.test@evil.example'], 'malformed Host header'],
    [['evil.example, www.example.test'], 'malformed Host header'],
    [['www.example.test/evil'], 'malformed Host header'],
    [['www.example.test:80:80'], 'malformed Host header'],
    [[''], 'malformed Host header'],
    [['-x.example.test'], 'malformed Host header'],
  ] as const) {
    t.deepEqual(requestTarget('/', hosts), { ok: false, reason }, JSON.stringify(hosts));
  }
});

test('absolute form: the host from the target, the Host header ignored (RFC 9112 §3.2.2)', (t) => {
  t.deepEqual(requestTarget('http://www.example.test/x?y', ['evil.example']), { ok: true, host: 'www.example.test', path: '/x?y' });
  t.deepEqual(requestTarget('HTTPS://WWW.EXAMPLE.TEST:8443', undefined), { ok: true, host: 'www.example.test', path: '/' });
  t.deepEqual(requestTarget('http://evil.example/x', ['www.example.test']), { ok: true, host: 'evil.example', path: '/x' });
  t.deepEqual(requestTarget('http://www.example.test@evil.example/', ['www.example.test']), { ok: false, reason: 'user info in the request target' });
  t.deepEqual(requestTarget('http://www.example.test:x/', ['www.example.test']), { ok: false, reason: 'malformed request target' });
});

test('asterisk, authority and other forms are refused', (t) => {
  for (const target of ['*', 'www.example.test:443', 'ftp://www.example.test/', 'javascript:alert(1)', '']) {
    t.deepEqual(requestTarget(target, ['www.example.test']), { ok: false, reason: 'not a path or an absolute URL' }, target);
  }
});

test('encodeTarget keeps RFC 3986 path and query characters and valid escapes, encodes the rest', (t) => {
  t.is(encodeTarget("/a-b_c.d~e/!$&'()*+,;=:@?q=1&r=/x?y"), "/a-b_c.d~e/!$&'()*+,;=:@?q=1&r=/x?y");
  t.is(encodeTarget('/%2e%2E/%zz/%4'), '/%2e%2E/%25zz/%254');
  t.is(encodeTarget('/a b"<>\\^`{|}#'), '/a%20b%22%3C%3E%5C%5E%60%7B%7C%7D%23');
  t.is(encodeTarget('/\r\nSet-Cookie: x'), '/%0D%0ASet-Cookie:%20x');
  t.is(encodeTarget('/\u00e9'), '/%E9', 'a Latin-1 character is the byte Node read');
  t.is(encodeTarget('/\u20ac\u{1f600}\ud800'), '/%E2%82%AC%F0%9F%98%80%EF%BF%BD');
});

const BASES = ['https://ams.example.net', 'https://nyc.example.net/shop', 'http://tyo.example.net:8080', 'http://[2001:db8::1]:8080/a/b'];

test('redirectUrl appends the encoded path to the base URL', (t) => {
  t.is(redirectUrl('https://nyc.example.net/shop', '/a?b=1'), 'https://nyc.example.net/shop/a?b=1');
  t.is(redirectUrl('https://ams.example.net', '/'), 'https://ams.example.net/');
  t.is(redirectUrl('https://ams.example.net', '//evil.example/x'), 'https://ams.example.net//evil.example/x');
  t.is(redirectUrl('https://ams.example.net', '/@evil.example'), 'https://ams.example.net/@evil.example');
  t.is(redirectUrl('https://ams.example.net', '@evil.example'), undefined, 'a path must start with /');
  t.is(redirectUrl('https://ams.example.net', 'evil.example'), undefined);
});

test('no path whatever gives a URL of another origin, or one a header or a parser reads differently', (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...BASES), fc.string({ unit: 'binary' }), fc.constantFrom('', '/', '//', '/\\', '/..', '/@', '/?'), (base, rest, prefix) => {
      const path = `/${prefix}${rest}`;
      const location = redirectUrl(base, path);
      if (location === undefined) return false;
      const url = new URL(location);
      // Only printable ASCII outside the characters a header or a URL parser would read as the end of the path.
      let unsafe = false;
      for (let i = 0; i < location.length; i++) {
        const code = location.charCodeAt(i);
        if (code <= 0x20 || code >= 0x7f || '"<>\\^`{|}#'.includes(location[i]!)) unsafe = true;
      }
      return url.origin === new URL(base).origin && location.startsWith(`${base}/`) && !unsafe;
    }),
    { numRuns: 2000 },
  );
  t.pass();
});
