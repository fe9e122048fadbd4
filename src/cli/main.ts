#!/usr/bin/env node
/**
 * `orch-apiserver [flags]`: parses the command line, starts the server, drains on SIGTERM/SIGINT.
 * `orch-apiserver credential ...`: the exec credential plugin (src/cli/credential.ts).
 */
import { setFlagsFromString } from 'node:v8';
import pino from 'pino';
import { FlagError } from '../config/flag-spec.js';
import { parseFlags } from '../config/flags.js';

/** the same signal again within this long is a copy of the first, not a second request */
const duplicateSignalWindowMs = 1000;

/** The plugin loads only what it needs: kubectl runs it on every invocation. */
async function runCredential(argv: string[]): Promise<void> {
  const { credential, CredentialError } = await import('./credential.js');
  try {
    await credential(argv, process.env, (text) => process.stdout.write(text));
  } catch (err) {
    if (!(err instanceof CredentialError)) throw err;
    process.stderr.write(`orch-apiserver credential: ${err.message}\n`);
    process.exit(1);
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === 'credential') return runCredential(process.argv.slice(3));
  let parsed;
  try {
    parsed = parseFlags(process.argv.slice(2));
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`Error: ${err.message}\nRun 'orch-apiserver --help' for usage.\n`);
      process.exit(1);
    }
    throw err;
  }
  if ('help' in parsed) {
    process.stdout.write(parsed.help);
    return;
  }
  const config = parsed.config;
  const log = pino({ level: config.logLevel, base: { component: 'orch-apiserver' } }, pino.destination({ sync: false }));
  // V8's allocation-site pretenuring, left on, put some server processes in a state where every
  // request's objects were promoted to the old generation: scavenges took 10-14 ms instead of 1-2
  // and a GET cost 20-30% more CPU, in about half the processes started (docs/decisions.md)
  setFlagsFromString('--no-allocation-site-pretenuring');
  const { startApiServer } = await import('../apiserver.js');
  // signals are handled from the start: one during startup stops the server once it is up
  const starting = startApiServer(config, log);
  let first: { signal: string; at: number } | undefined;
  const stop = (signal: string) => {
    if (first) {
      // Ctrl-C under `npm start` reaches this process twice: from the terminal (the whole process
      // group gets it) and forwarded by npm. That copy is not the user's second request.
      if (signal === first.signal && Date.now() - first.at < duplicateSignalWindowMs) return;
      process.exit(1); // a second signal means: now, as kube-apiserver's signal handler does
    }
    first = { signal, at: Date.now() };
    log.info({ signal }, 'received signal');
    starting.then((server) => server.shutdown()).then(() => { log.flush(); process.exit(0); }, (err: unknown) => {
      log.error({ err }, 'shutdown failed');
      log.flush();
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  await starting;
}

main().catch((err: unknown) => {
  process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
