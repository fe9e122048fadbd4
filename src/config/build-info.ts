/**
 * What /version answers: the Kubernetes release this server is compatible with (clients compare
 * major and minor, and parse gitVersion as semver), our own version as gitVersion's build
 * metadata (as k3s writes `v1.32.1+k3s1`, from package.json), and the commit and time of the
 * build, from the dist/build-info.json that scripts/build-info.mjs writes after compiling.
 */
import { readFileSync } from 'node:fs';

/** The Kubernetes API this server serves. */
const kubernetes = { major: '1', minor: '32', gitVersion: 'v1.32.0' };

export interface BuildInfo {
  gitCommit: string;
  /** `clean`, `dirty`, or '' when unknown */
  gitTreeState: string;
  buildDate: string;
}

/** A build that wrote no build-info.json (a bare `tsc`): Kubernetes' own unknown values. */
const unknownBuild: BuildInfo = { gitCommit: 'unknown', gitTreeState: '', buildDate: '1970-01-01T00:00:00Z' };

export function readBuildInfo(file: URL | string): BuildInfo {
  let parsed: Partial<BuildInfo>;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<BuildInfo>;
  } catch {
    return unknownBuild;
  }
  const text = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback);
  return {
    gitCommit: text(parsed.gitCommit, unknownBuild.gitCommit),
    gitTreeState: text(parsed.gitTreeState, unknownBuild.gitTreeState),
    buildDate: text(parsed.buildDate, unknownBuild.buildDate),
  };
}

/** The /version document for a build of our `version`. */
export function versionInfo(version: string, build: BuildInfo): Record<string, string> {
  return {
    major: kubernetes.major,
    minor: kubernetes.minor,
    gitVersion: `${kubernetes.gitVersion}+orch-${version}`,
    gitCommit: build.gitCommit,
    gitTreeState: build.gitTreeState,
    buildDate: build.buildDate,
    goVersion: `node${process.versions.node}`,
    compiler: 'node',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

/** package.json sits above dist/, whose src/config/ holds this module once compiled. */
const packageVersion = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** This build's: dist/build-info.json beside the compiled dist/src/. */
export const serverVersion = versionInfo(packageVersion, readBuildInfo(new URL('../../build-info.json', import.meta.url)));
