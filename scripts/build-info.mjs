#!/usr/bin/env node
/**
 * Writes what /version reports about this build, the git commit and tree state and the build
 * time, into dist/build-info.json (or the path given). Run after tsc.
 * Without git (a source tarball, a container without it) the commit is "unknown" and the tree
 * state empty, as Kubernetes' own defaults leave them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? resolve(root, 'dist', 'build-info.json'));

/** A git command's output, or undefined when git or the repository is not there. */
function git(...args) {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

const commit = git('rev-parse', 'HEAD');
const status = commit === undefined ? undefined : git('status', '--porcelain', '--untracked-files=no');
const info = {
  gitCommit: commit ?? 'unknown',
  gitTreeState: status === undefined ? '' : status === '' ? 'clean' : 'dirty',
  // Kubernetes' format: UTC, whole seconds
  buildDate: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(info, null, 2)}\n`);
