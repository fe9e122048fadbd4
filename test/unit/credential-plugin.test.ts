/** The exec credential plugin's arguments and exec info, in process; its runs under kubectl are in test/e2e. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { credential, parseCredentialArgs, readExecInfo } from '../../src/cli/credential.js';

const work = mkdtempSync(join(tmpdir(), 'orch-credential-'));
after(() => rmSync(work, { recursive: true, force: true }));

async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  let out = '';
  await credential(argv, env, (text) => { out += text; });
  return JSON.parse(out) as Record<string, unknown>;
}

describe('orch-apiserver credential', () => {
  it('needs exactly one token source', () => {
    assert.throws(() => parseCredentialArgs([]), { message: 'exactly one of --token-file and --service-account must be given' });
    assert.throws(() => parseCredentialArgs(['--token-file=a', '--service-account=ns/sa']), /exactly one/);
    assert.throws(() => parseCredentialArgs(['--service-account=sa']), { message: '--service-account must be NAMESPACE/NAME' });
    assert.throws(() => parseCredentialArgs(['--token-file']), { message: 'flag needs an argument: --token-file' });
    assert.deepEqual(parseCredentialArgs(['--service-account', 'ns/sa', '--audience=a', '--audience=b', '--expiration=2h']),
      { serviceAccount: 'ns/sa', audiences: ['a', 'b'], expirationSeconds: 7200 });
  });

  it('answers in the apiVersion the caller asks for, ours by default, and refuses others', () => {
    assert.deepEqual(readExecInfo({}), { apiVersion: 'client.authentication.orch.io/v1', interactive: false });
    assert.equal(readExecInfo({ KUBERNETES_EXEC_INFO: '{"apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":true}}' }).interactive, true);
    assert.throws(() => readExecInfo({ KUBERNETES_EXEC_INFO: '{"apiVersion":"client.authentication.k8s.io/v2"}' }), /asks for client\.authentication\.k8s\.io\/v2/);
  });

  it('prints an ExecCredential from a token file, with the expiry of a JWT', async () => {
    const file = join(work, 'token');
    const exp = 2_000_000_000;
    const jwt = `e30.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.sig`;
    writeFileSync(file, `${jwt}\n`);
    assert.deepEqual(await run(['--token-file', file], { KUBERNETES_EXEC_INFO: '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}' }), {
      kind: 'ExecCredential', apiVersion: 'client.authentication.k8s.io/v1', spec: { interactive: false },
      status: { expirationTimestamp: new Date(exp * 1000).toISOString().replace('.000Z', 'Z'), token: jwt },
    });
    writeFileSync(file, 'opaque-token');
    assert.deepEqual((await run(['--token-file', file], {})).status, { token: 'opaque-token' });
  });

  it('fails on a missing token file when the caller cannot be asked', async () => {
    await assert.rejects(run(['--token-file', join(work, 'missing')], {}), /cannot read .*missing \(ENOENT\) and the caller is not interactive/);
  });
});
