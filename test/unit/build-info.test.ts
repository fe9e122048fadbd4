/**
 * What /version reports about the build: scripts/build-info.mjs records the git commit, tree
 * state and build time (with or without git), and the server reads them back with Kubernetes'
 * unknown values when the build wrote nothing.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readBuildInfo, serverVersion, versionInfo } from '../../src/config/build-info.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(root, 'scripts', 'build-info.mjs');
const dir = mkdtempSync(join(tmpdir(), 'orch-build-info-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function headCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** Kubernetes' date format: UTC, whole seconds. */
const buildDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe('scripts/build-info.mjs', () => {
  it('records the commit and tree state git reports, and the build time', () => {
    const out = join(dir, 'with-git.json');
    execFileSync(process.execPath, [script, out]);
    const info = JSON.parse(readFileSync(out, 'utf8'));
    const head = headCommit();
    assert.equal(info.gitCommit, head ?? 'unknown');
    assert.ok(head === undefined ? info.gitTreeState === '' : ['clean', 'dirty'].includes(info.gitTreeState), info.gitTreeState);
    assert.match(info.buildDate, buildDate);
  });

  it('without git: commit "unknown", tree state empty', () => {
    const out = join(dir, 'without-git.json');
    execFileSync(process.execPath, [script, out], { env: { PATH: join(dir, 'no-such-bin') } });
    const info = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(info.gitCommit, 'unknown');
    assert.equal(info.gitTreeState, '');
    assert.match(info.buildDate, buildDate);
  });
});

describe('the /version document', () => {
  it('reads a build-info file, and falls back to Kubernetes\' unknown values without one', () => {
    const file = join(dir, 'written.json');
    writeFileSync(file, JSON.stringify({ gitCommit: 'abc123', gitTreeState: 'dirty', buildDate: '2025-01-02T03:04:05Z' }));
    assert.deepEqual(readBuildInfo(file), { gitCommit: 'abc123', gitTreeState: 'dirty', buildDate: '2025-01-02T03:04:05Z' });
    assert.deepEqual(readBuildInfo(join(dir, 'absent.json')), { gitCommit: 'unknown', gitTreeState: '', buildDate: '1970-01-01T00:00:00Z' });
  });

  it('is Kubernetes 1.32 with our version as semver build metadata', () => {
    const v = versionInfo('1.2.3', { gitCommit: 'abc123', gitTreeState: 'clean', buildDate: '2025-01-02T03:04:05Z' });
    assert.equal(v.major, '1');
    assert.equal(v.minor, '32');
    assert.equal(v.gitVersion, 'v1.32.0+orch-1.2.3');
    // client-go's version.ParseSemantic grammar
    assert.match(v.gitVersion, /^v\d+\.\d+\.\d+(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/);
    assert.equal(v.gitCommit, 'abc123');
    assert.equal(v.buildDate, '2025-01-02T03:04:05Z');
  });

  it('serves this build: package.json\'s version, dist/build-info.json\'s commit and date', async () => {
    // what `npm run build` does after tsc, then the module loaded afresh
    execFileSync(process.execPath, [script]);
    const built = JSON.parse(readFileSync(join(root, 'dist', 'build-info.json'), 'utf8'));
    const loaded = await import(new URL('../../src/config/build-info.js?after-build', import.meta.url).href) as { serverVersion: typeof serverVersion };
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    assert.equal(loaded.serverVersion.gitVersion, `v1.32.0+orch-${version}`);
    assert.equal(loaded.serverVersion.gitCommit, built.gitCommit);
    assert.equal(loaded.serverVersion.gitTreeState, built.gitTreeState);
    assert.equal(loaded.serverVersion.buildDate, built.buildDate);
  });
});
