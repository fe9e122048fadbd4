import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { HealthEndpoint, type HealthCheck } from '../../src/http/health.js';

const PLAIN = 'text/plain; charset=utf-8';
const PLAIN_NOSNIFF = { 'Content-Type': PLAIN, 'X-Content-Type-Options': 'nosniff' };

function healthy(name: string): HealthCheck {
  return { name, check: () => undefined };
}

function failing(name: string, reason: string): HealthCheck {
  return { name, check: () => reason };
}

const q = (s = '') => new URLSearchParams(s);

describe('HealthEndpoint root', () => {
  const readyz = new HealthEndpoint('readyz', [healthy('ping'), healthy('etcd'), healthy('poststarthook/bootstrap-controller')]);

  it('answers a bare "ok" when all pass and verbose is off', () => {
    assert.deepEqual(readyz.handle('/readyz', q()), { status: 200, headers: PLAIN_NOSNIFF, body: 'ok' });
  });

  it('lists every check when verbose is present, whatever its value', () => {
    const body = '[+]ping ok\n[+]etcd ok\n[+]poststarthook/bootstrap-controller ok\nreadyz check passed\n';
    for (const query of ['verbose', 'verbose=true', 'verbose=false']) {
      assert.deepEqual(readyz.handle('/readyz', q(query)), { status: 200, headers: PLAIN_NOSNIFF, body });
    }
  });

  it('names the endpoint in the final line', () => {
    const livez = new HealthEndpoint('livez', [healthy('ping')]);
    assert.equal(livez.handle('/livez', q('verbose'))?.body, '[+]ping ok\nlivez check passed\n');
    const healthz = new HealthEndpoint('healthz', [healthy('ping')]);
    assert.equal(healthz.handle('/healthz', q('verbose'))?.body, '[+]ping ok\nhealthz check passed\n');
  });

  it('installs ping when given no checks', () => {
    const empty = new HealthEndpoint('livez', []);
    assert.equal(empty.handle('/livez', q('verbose'))?.body, '[+]ping ok\nlivez check passed\n');
  });

  it('marks excluded checks and warns, sorted and quoted, about names that match nothing', () => {
    const res = readyz.handle('/readyz', q('verbose&exclude=etcd&exclude=zz&exclude=a,b&exclude=zz&exclude=poststarthook/bootstrap-controller'));
    assert.deepEqual(res, {
      status: 200,
      headers: PLAIN_NOSNIFF,
      body: '[+]ping ok\n[+]etcd excluded: ok\n[+]poststarthook/bootstrap-controller excluded: ok\n' +
        'warn: some health checks cannot be excluded: no matches for "a,b","zz"\nreadyz check passed\n',
    });
  });

  it('quotes unmatched names as Go %q does', () => {
    const res = readyz.handle('/readyz', q('verbose&exclude=a%22b%5Cc%0A%7F%C3%A9'));
    assert.match(res?.body ?? '', /no matches for "a\\"b\\\\c\\n\\x7fé"\n/);
  });

  it('keeps the bare "ok" when only the exclusion warning would show', () => {
    assert.equal(readyz.handle('/readyz', q('exclude=nope'))?.body, 'ok');
  });

  it('excluding a failing check makes the endpoint pass', () => {
    const ep = new HealthEndpoint('readyz', [healthy('ping'), failing('etcd', 'down')]);
    assert.deepEqual(ep.handle('/readyz', q('exclude=etcd')), { status: 200, headers: PLAIN_NOSNIFF, body: 'ok' });
  });
});

describe('HealthEndpoint root with a failing check', () => {
  const logged: Array<[string, string]> = [];
  const ep = new HealthEndpoint('readyz',
    [healthy('ping'), failing('etcd', 'etcd client connection not yet established'), failing('poststarthook/rbac/bootstrap-roles', 'not finished')],
    (check, reason) => logged.push([check, reason]));
  const body = '[+]ping ok\n[-]etcd failed: reason withheld\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n' +
    'readyz check failed\n';

  it('answers 500 with the verbose listing even when verbose is off, reasons withheld', () => {
    logged.length = 0;
    assert.deepEqual(ep.handle('/readyz', q()), { status: 500, headers: PLAIN_NOSNIFF, body });
    assert.deepEqual(ep.handle('/readyz', q('verbose')), { status: 500, headers: PLAIN_NOSNIFF, body });
  });

  it('reports the reasons to the failure hook only', () => {
    logged.length = 0;
    ep.handle('/readyz', q());
    assert.deepEqual(logged, [
      ['etcd', 'etcd client connection not yet established'],
      ['poststarthook/rbac/bootstrap-roles', 'not finished'],
    ]);
  });

  it('puts the exclusion warning before the final line', () => {
    assert.equal(ep.handle('/readyz', q('exclude=etcd&exclude=nope'))?.body,
      '[+]ping ok\n[+]etcd excluded: ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n' +
      'warn: some health checks cannot be excluded: no matches for "nope"\nreadyz check failed\n');
  });
});

describe('HealthEndpoint single check', () => {
  const ep = new HealthEndpoint('livez',
    [healthy('ping'), failing('etcd', 'context deadline exceeded'), healthy('poststarthook/start-apiserver-admission-initializer')]);

  it('answers "ok" with the sniffed content type only', () => {
    assert.deepEqual(ep.handle('/livez/ping', q()), { status: 200, headers: { 'Content-Type': PLAIN }, body: 'ok' });
  });

  it('serves names containing "/"', () => {
    assert.deepEqual(ep.handle('/livez/poststarthook/start-apiserver-admission-initializer', q()),
      { status: 200, headers: { 'Content-Type': PLAIN }, body: 'ok' });
  });

  it('shows the failure reason with 500', () => {
    assert.deepEqual(ep.handle('/livez/etcd', q('verbose')),
      { status: 500, headers: PLAIN_NOSNIFF, body: 'internal server error: context deadline exceeded\n' });
  });

  it('leaves unknown check names to the not-found handler', () => {
    for (const path of ['/livez/nope', '/livez/poststarthook', '/livez/', '/livez/ping/']) {
      assert.equal(ep.handle(path, q()), undefined, path);
    }
  });

  it('leaves other paths alone', () => {
    for (const path of ['/readyz', '/readyz/ping', '/livezz', '/', '/api']) {
      assert.equal(ep.handle(path, q()), undefined, path);
    }
  });
});
