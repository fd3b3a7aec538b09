// The network rules' address normaliser and verdicts, without a sandbox: every spelling of an address
// comes out canonical, and the lists hold by address (the end-to-end attack is network-addresses.test.ts).
import { isIPv6 } from 'node:net';
import { describe, expect, it } from 'vitest';
import { formatAddress, inRange, isThisHost, parseAddress, parseRange } from '../../../src/runtime/sandbox/network-address.js';
import { isNetworkEntry, NetworkRules, normaliseName, type Resolver } from '../../../src/runtime/sandbox/network-rules.js';

const canonical = (text: string) => {
  const address = parseAddress(text);
  return address && formatAddress(address);
};

describe('parseAddress', () => {
  it.each([
    '127.0.0.1',
    '127.1',
    '127.0.1',
    '2130706433',
    '0x7f000001',
    '0X7F000001',
    '0x7f.1',
    '0x7f.0.0.1',
    '0177.0.0.1',
    '0177.1',
    '127.000.000.001',
    '0x7f.0x0.0x0.0x1',
    '127.0.0.1.',
    '[::ffff:127.0.0.1]',
    '::ffff:127.0.0.1',
    '[::ffff:7f00:1]',
    '[0:0:0:0:0:ffff:7f00:1]',
    '[::FFFF:7F00:1]',
    '[::127.0.0.1]',
    '[::7f00:1]',
    '[::ffff:0:7f00:1]',
    '[64:ff9b::7f00:1]',
    ' 127.0.0.1 ',
  ])('%s is 127.0.0.1', (spelling) => {
    expect(canonical(spelling)).toBe('127.0.0.1');
  });

  it.each(['::1', '[::1]', '[0:0:0:0:0:0:0:1]', '[0000::0001]', '[::1%lo]', '::1%eth0', '[0::1]'])('%s is ::1', (spelling) => {
    expect(canonical(spelling)).toBe('0:0:0:0:0:0:0:1');
  });

  it('0.0.0.0, 0 and [::] are addresses (this host)', () => {
    expect(canonical('0.0.0.0')).toBe('0.0.0.0');
    expect(canonical('0')).toBe('0.0.0.0');
    expect(canonical('0x0')).toBe('0.0.0.0');
    expect(canonical('0x')).toBe('0.0.0.0'); // as inet_aton and the URL standard read it
    expect(canonical('[::]')).toBe('0:0:0:0:0:0:0:0');
    for (const s of ['0.0.0.0', '0', '[::]', '::', '127.255.255.254', '[::ffff:0.0.0.0]']) expect(isThisHost(parseAddress(s)!), s).toBe(true);
    for (const s of ['10.0.0.1', '128.0.0.1', '[::2]', '[fe80::1%lo]', '[2001:db8::1]']) expect(isThisHost(parseAddress(s)!), s).toBe(false);
  });

  it("the host's own interface addresses are this host too", () => {
    expect(isThisHost(parseAddress('192.0.2.7')!, [parseAddress('192.0.2.7')!])).toBe(true);
  });

  it.each([
    'localhost',
    'example.com',
    '256.0.0.1',
    '127.0.0.256',
    '1.2.3.4.5',
    '08.0.0.1',
    '127..1',
    '.127.0.0.1',
    '4294967296',
    '1.16777216',
    '::g',
    '[1:2:3:4:5:6:7:8:9]',
    '',
    '127.0.0.1..',
  ])('%s is no address', (spelling) => {
    expect(parseAddress(spelling)).toBeUndefined();
  });

  // huddle checks IPv6 spelling itself (net.isIPv6's pattern is slow to build): it must agree with Node on every text.
  it('takes exactly the IPv6 texts net.isIPv6 takes', () => {
    const texts = [
      '::',
      '::1',
      '1::',
      '1:2:3:4:5:6:7:8',
      '1:2:3:4:5:6:7::',
      '::2:3:4:5:6:7:8',
      '::1:2:3:4:5:6:7:8',
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      ':::',
      ':1::',
      '1:::2',
      '12345::',
      'fffff::1',
      'g::1',
      '1:2:3:4:5:6:1.2.3.4',
      '1:2:3:4:5:6:7:1.2.3.4',
      '::ffff:1.2.3.4',
      '::1.2.3.4',
      '::ffff:0177.0.0.1',
      '::ffff:256.1.1.1',
      '::ffff:1.2.3',
      '1:::1.2.3.4',
      '::ffff:01.2.3.4',
      '::1.2.3.4:5',
      'fe80::1',
      'FE80::ABCD',
      ':',
      '',
      '1.2.3.4',
      '::ffff:1.2.3.4.5',
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 5000; i++) {
      const length = 1 + (next() % 18);
      texts.push(Array.from({ length }, () => '0123456789abcdef:.:'[next() % 19]).join(''));
    }
    for (const text of texts) {
      const ours = text.includes(':') ? parseAddress(text) !== undefined : isIPv6(text);
      expect(ours, text).toBe(isIPv6(text));
    }
  });

  it('keeps other addresses as they are', () => {
    expect(canonical('10.1.2.3')).toBe('10.1.2.3');
    expect(canonical('4294967295')).toBe('255.255.255.255');
    expect(canonical('1.16777215')).toBe('1.255.255.255');
    expect(canonical('[2001:db8::ff00:42:8329]')).toBe('2001:db8:0:0:0:ff00:42:8329');
  });
});

describe('parseRange', () => {
  it('IPv4 and IPv6 CIDR, in any spelling of the address', () => {
    const ten = parseRange('10.0.0.0/8')!;
    expect(inRange(parseAddress('10.200.3.4')!, ten)).toBe(true);
    expect(inRange(parseAddress('[::ffff:10.200.3.4]')!, ten)).toBe(true);
    expect(inRange(parseAddress('11.0.0.1')!, ten)).toBe(false);
    expect(inRange(parseAddress('127.9.9.9')!, parseRange('0x7f.0.0.0/8')!)).toBe(true);
    expect(inRange(parseAddress('fd12::1')!, parseRange('fd00::/8')!)).toBe(true);
    expect(inRange(parseAddress('10.0.0.1')!, parseRange('::ffff:10.0.0.0/104')!)).toBe(true);
    expect(inRange(parseAddress('1.2.3.4')!, parseRange('::/0')!)).toBe(true);
    expect(inRange(parseAddress('1.2.3.4')!, parseRange('0.0.0.0/0')!)).toBe(true);
    expect(inRange(parseAddress('fd00::1')!, parseRange('0.0.0.0/0')!)).toBe(false);
  });

  it('refuses what is no range', () => {
    for (const s of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/x', 'example.com/8']) expect(parseRange(s), s).toBeUndefined();
  });
});

describe('normaliseName', () => {
  it('case and one trailing dot; nothing that is no host name', () => {
    expect(normaliseName('LocalHost.')).toBe('localhost');
    expect(normaliseName('Registry.NPMjs.org')).toBe('registry.npmjs.org');
    for (const s of ['a b', 'a/b', 'a@b', 'a%00', '-a.com', 'a..b', '', '.']) expect(normaliseName(s), s).toBeUndefined();
  });
});

/** A resolver over a fixed table; every lookup is recorded. */
function fakeResolver(table: Record<string, string[]>, local: string[] = []): Resolver & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async resolve(name) {
      asked.push(name);
      const found = table[name];
      if (!found) throw new Error(`ENOTFOUND ${name}`);
      return found.map((a) => parseAddress(a)!);
    },
    interfaceAddresses: () => local.map((a) => parseAddress(a)!),
  };
}

const verdict = async (rules: NetworkRules, host: string) => {
  const v = await rules.check(host);
  return v.ok ? `ok ${formatAddress(v.address)}` : `no: ${v.reason}`;
};

describe('NetworkRules', () => {
  const table = {
    localhost: ['127.0.0.1', '::1'],
    vm: ['127.0.0.1'],
    'rebind.example.com': ['127.0.0.1'],
    'registry.npmjs.org': ['104.16.0.35'],
    'cdn.example.com': ['93.184.215.14'],
    'evil.test': ['93.184.215.14'],
    'mixed.example.com': ['127.0.0.1', '93.184.215.15'],
  };

  it('deny localhost: the whole of this machine, however it is written', async () => {
    const rules = new NetworkRules({ deny: ['localhost'] }, fakeResolver(table, ['192.0.2.7']));
    for (const host of [
      'localhost',
      'LOCALHOST',
      'localhost.',
      '127.0.0.1',
      '127.1',
      '127.0.1',
      '2130706433',
      '0x7f000001',
      '0x7f.1',
      '0177.0.0.1',
      '127.000.000.001',
      '127.5.5.5',
      '0.0.0.0',
      '0',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '[::1]',
      '::1',
      '[0:0:0:0:0:0:0:1]',
      '[::1%lo]',
      '[::]',
      'vm',
      'rebind.example.com',
      '192.0.2.7',
    ]) {
      expect(await verdict(rules, host), host).toMatch(/^no: .* is denied by the sandbox network settings \(localhost\)$/);
    }
    expect(await verdict(rules, 'registry.npmjs.org')).toBe('ok 104.16.0.35');
    // A name with a loopback address and another: the other one is where the proxy connects.
    expect(await verdict(rules, 'mixed.example.com')).toBe('ok 93.184.215.15');
  });

  it('deny of a loopback address in any spelling is this machine too; a range denies by address', async () => {
    for (const entry of ['127.0.0.1', '::1', '0x7f000001', '[::ffff:127.0.0.1]', '0.0.0.0']) {
      const rules = new NetworkRules({ deny: [entry] }, fakeResolver(table));
      for (const host of ['127.0.0.2', '[::1]', '0.0.0.0', 'localhost']) expect(await verdict(rules, host), `${entry} ${host}`).toMatch(/^no: /);
    }
    const rules = new NetworkRules({ deny: ['93.184.0.0/16'] }, fakeResolver(table));
    expect(await verdict(rules, 'cdn.example.com')).toMatch(/^no: cdn\.example\.com \(93\.184\.215\.14\) is denied .*\(93\.184\.0\.0\/16\)$/);
    expect(await verdict(rules, '[::ffff:93.184.1.1]')).toMatch(/^no: /);
    expect(await verdict(rules, 'registry.npmjs.org')).toBe('ok 104.16.0.35');
  });

  it("a denied name's addresses are denied however they are written", async () => {
    const rules = new NetworkRules({ deny: ['evil.test'] }, fakeResolver(table));
    expect(await verdict(rules, 'EVIL.test.')).toMatch(/^no: evil\.test is denied/);
    expect(await verdict(rules, '93.184.215.14')).toMatch(/^no: 93\.184\.215\.14 is denied .*\(evil\.test\)$/);
    expect(await verdict(rules, '1572394766')).toMatch(/^no: /);
    expect(await verdict(rules, 'cdn.example.com')).toMatch(/^no: cdn\.example\.com \(93\.184\.215\.14\) is denied/);
  });

  it('an allowed name does not reach this machine (DNS rebinding); localhost or the address must be allowed', async () => {
    const rules = new NetworkRules({ allow: ['*.example.com', 'registry.npmjs.org'] }, fakeResolver(table));
    expect(await verdict(rules, 'rebind.example.com')).toMatch(
      /^no: rebind\.example\.com \(127\.0\.0\.1\) is this machine, which a name on the allow-list does not reach/,
    );
    expect(await verdict(rules, 'cdn.example.com')).toBe('ok 93.184.215.14');
    expect(await verdict(rules, 'mixed.example.com')).toBe('ok 93.184.215.15');
    expect(await verdict(rules, '127.0.0.1')).toMatch(/^no: 127\.0\.0\.1 is not on the sandbox network allow-list/);
    expect(await verdict(rules, '104.16.0.35')).toMatch(/^no: /);
    const local = new NetworkRules({ allow: ['localhost'] }, fakeResolver(table));
    expect(await verdict(local, 'localhost')).toBe('ok 127.0.0.1');
    expect(await verdict(local, '127.1')).toBe('ok 127.0.0.1');
    expect(await verdict(local, 'cdn.example.com')).toMatch(/^no: /);
    const address = new NetworkRules({ allow: ['127.0.0.1'] }, fakeResolver(table));
    expect(await verdict(address, '0x7f.1')).toBe('ok 127.0.0.1');
    expect(await verdict(address, '127.0.0.2')).toMatch(/^no: /);
  });

  it('with an allow-list, names nothing on it lets through are never looked up', async () => {
    const resolver = fakeResolver(table);
    const rules = new NetworkRules({ allow: ['registry.npmjs.org', '10.0.0.0/8'], deny: ['*.blocked.test'] }, resolver);
    expect(await verdict(rules, 'secret-data.attacker.test')).toMatch(/^no: secret-data\.attacker\.test is not on the sandbox network allow-list/);
    expect(await verdict(rules, 'a.blocked.test')).toMatch(/^no: a\.blocked\.test is denied .*\(\*\.blocked\.test\)$/);
    expect(resolver.asked).toEqual([]);
    expect(await verdict(rules, 'registry.npmjs.org')).toBe('ok 104.16.0.35');
    expect(await verdict(rules, '10.1.1.1')).toBe('ok 10.1.1.1');
  });

  it('what is no host is refused; invalid list entries are reported and an allow-list of them allows nothing', async () => {
    const rules = new NetworkRules({ allow: ['not a host', '10.0.0.0/99'] }, fakeResolver(table));
    expect(
      ['not a host', '10.0.0.0/99', 'ok.com', '*.', '*', 'localhost', '::1', '[::1]', 'fd00::/8', 'http://x.test/'].filter((e) => !isNetworkEntry(e)),
    ).toEqual(['not a host', '10.0.0.0/99', '*.', 'http://x.test/']);
    expect(await verdict(rules, '10.0.0.1')).toMatch(/^no: /);
    expect(await verdict(rules, 'a b')).toBe('no: "a b" is not a host name or address');
    expect(await verdict(rules, 'nowhere.test')).toMatch(/^no: nowhere\.test is not on the sandbox network allow-list/);
    expect(await verdict(new NetworkRules({ deny: ['x.test'] }, fakeResolver(table)), 'nowhere.test')).toBe('no: nowhere.test does not resolve');
  });

  it('`*` allows every host', async () => {
    const rules = new NetworkRules({ allow: ['*'], deny: ['evil.test'] }, fakeResolver(table));
    expect(await verdict(rules, 'cdn.example.com')).toMatch(/^no: /);
    expect(await verdict(rules, 'registry.npmjs.org')).toBe('ok 104.16.0.35');
  });
});
