/**
 * --runtime-config on a running server: a disabled group-version vanishes from discovery and
 * OpenAPI and answers 404 (under both group names); a key naming an unknown group refuses start.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startInProcess, type InProcessServer } from '../support/in-process.js';
import { freePort, mainScript, request } from '../support/server.js';

describe('--runtime-config', () => {
  let h: InProcessServer;
  before(async () => { h = await startInProcess(['--runtime-config=coordination.k8s.io/v1=false,v1/configmaps=false']); });
  after(async () => { await h?.dispose(); });

  it('serves disabled versions and resources nowhere', async () => {
    const server = h.server;
    for (const path of ['/apis/coordination.orch.io/v1/leases', '/apis/coordination.k8s.io/v1/leases', '/apis/coordination.orch.io/v1', '/api/v1/configmaps']) {
      assert.equal((await request(server, path)).status, 404, path);
    }
    const groups = (await request(server, '/apis')).json.groups.map((g: { name: string }) => g.name);
    assert.ok(!groups.includes('coordination.orch.io') && !groups.includes('coordination.k8s.io'), groups.join());
    const core = (await request(server, '/api/v1')).json.resources.map((r: { name: string }) => r.name);
    assert.ok(!core.includes('configmaps') && core.includes('secrets'), core.join());
    assert.equal((await request(server, '/openapi/v3')).json.paths['apis/coordination.orch.io/v1'], undefined);
    assert.equal((await request(server, '/api/v1/secrets')).status, 200);
  });

  it('refuses to start with a key naming a group no built-in serves', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-rc-'));
    try {
      const run = spawnSync(process.execPath, [mainScript, '--data-dir', dataDir, '--secure-port', String(await freePort()), '--runtime-config=apps/v1=true'], { encoding: 'utf8', timeout: 60_000 });
      assert.notEqual(run.status, 0);
      assert.match(run.stderr, /unknown api groups apps/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
