/** --runtime-config enablement rules (MergeAPIResourceConfigs) and the built-in kinds they leave. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { enabledKinds } from '../../src/api/registry/enablement.js';
import { builtinKinds } from '../../src/api/registry/builtin.js';
import { apiEnabled, parseRuntimeConfig } from '../../src/config/runtime-config.js';

const on = (text: string, group: string, version: string, resource = 'things') => apiEnabled(parseRuntimeConfig(text), [group], version, resource);

describe('--runtime-config', () => {
  it('enables GA versions and disables beta and alpha by default', () => {
    assert.equal(on('', 'x.io', 'v1'), true);
    assert.equal(on('', 'x.io', 'v1beta1'), false);
    assert.equal(on('', 'x.io', 'v2alpha1'), false);
  });

  it('applies api/all, api/ga, api/beta, api/alpha, then group-versions, then resources', () => {
    assert.equal(on('api/beta', 'x.io', 'v1beta1'), true, 'a key alone means true');
    assert.equal(on('api/all=false,api/ga=true', 'x.io', 'v1'), true);
    assert.equal(on('api/all=false,api/ga=true', 'x.io', 'v1alpha1'), false);
    assert.equal(on('api/alpha=true,x.io/v1alpha1=false', 'x.io', 'v1alpha1'), false);
    assert.equal(on('api/all=false,x.io/v1=true', 'x.io', 'v1'), true);
    assert.equal(on('x.io/v1=false,x.io/v1/things=true', 'x.io', 'v1'), true);
    assert.equal(on('x.io/v1/things=false', 'x.io', 'v1'), false);
    assert.equal(on('x.io/v1/things=false', 'x.io', 'v1', 'others'), true);
    assert.equal(on('v1=false', '', 'v1'), false, 'v1 names the core group');
  });

  it('filters the built-in kinds, under either group name, and refuses unknown groups', () => {
    const names = (text: string) => enabledKinds(builtinKinds, parseRuntimeConfig(text)).map((k) => `${k.group}/${k.resource}`);
    assert.ok(!names('coordination.k8s.io/v1=false').includes('coordination.orch.io/leases'));
    assert.ok(names('coordination.k8s.io/v1=false').includes('/serviceaccounts'));
    assert.ok(!names('v1/secrets=false').includes('/secrets'));
    assert.ok(!names('api/all=false,v1=true').includes('events.orch.io/events'));
    assert.throws(() => enabledKinds(builtinKinds, parseRuntimeConfig('apps/v1=true,batch/v1=false')), { message: 'unknown api groups apps,batch' });
  });
});
