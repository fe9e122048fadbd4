#!/usr/bin/env node
/**
 * The build: `tsc -b`, then outputs of deleted sources are pruned. It never deletes dist/ as a
 * whole: `tsc -b` rewrites only what changed, so a server already running from this checkout keeps
 * its files, and on an unchanged checkout the build is an up-to-date check of well under a second.
 * prestart, pretest and bench run this script directly: a second npm would cost as much again.
 */
import { copyFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pruneDist } from './prune-dist.mjs';

// required, not imported: an ESM import would first scan all of typescript.js for its exports
const ts = createRequire(import.meta.url)('typescript');

const root = new URL('..', import.meta.url).pathname;

const reportDiagnostic = ts.createDiagnosticReporter(ts.sys, process.stdout.isTTY);
const host = ts.createSolutionBuilderHost(ts.sys, undefined, reportDiagnostic);
const status = ts.createSolutionBuilder(host, [`${root}tsconfig.json`], {}).build();
if (status !== ts.ExitStatus.Success) process.exit(1);

pruneDist(root);

// the .proto definitions the protobuf codec loads at start travel with the compiled code
for (const file of readdirSync(`${root}src/codec/proto`).filter((f) => f.endsWith('.proto'))) {
  copyFileSync(`${root}src/codec/proto/${file}`, `${root}dist/src/codec/proto/${file}`);
}

// what /version reports of this build (commit, tree state, time)
await import('./build-info.mjs');
