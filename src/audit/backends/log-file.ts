/**
 * The audit log file with kube-apiserver's rotation semantics (lumberjack's): rotated by
 * rotating-file-stream once it reaches --audit-log-maxsize megabytes (100 when 0, lumberjack's
 * default), backups named `<name>-<UTC time>.<ext>` (gzipped with --audit-log-compress), at most
 * --audit-log-maxbackup kept, and none older than --audit-log-maxage days by the time in their
 * name. The file is created 0600: audit events carry request bodies.
 */
import { readdirSync, unlinkSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';

export interface LogFileOptions {
  path: string;
  /** megabytes; 0: 100 */
  maxSizeMB: number;
  /** 0: keep all */
  maxBackups: number;
  /** days; 0: no age limit */
  maxAgeDays: number;
  compress: boolean;
}

const defaultMaxSizeMB = 100;
const dayMs = 24 * 60 * 60 * 1000;

/** lumberjack's backup time format, in UTC: 2006-01-02T15-04-05.000 */
function backupTime(time: Date): string {
  return time.toISOString().slice(0, 23).replace(/:/g, '-');
}

export function openLogFile(o: LogFileOptions, onWarning: (err: Error) => void): RotatingFileStream {
  const dir = dirname(o.path);
  const name = basename(o.path);
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  const gz = o.compress ? '.gz' : '';
  const generator = (time: number | Date | null, index?: number): string => {
    if (!time) return name;
    const t = typeof time === 'number' ? new Date(time) : time;
    return `${stem}-${backupTime(t)}${index && index > 1 ? `-${index}` : ''}${ext}${gz}`;
  };
  const stream = createStream(generator as (time: number | Date, index?: number) => string, {
    path: dir,
    size: `${o.maxSizeMB > 0 ? o.maxSizeMB : defaultMaxSizeMB}M`,
    ...(o.maxBackups > 0 ? { maxFiles: o.maxBackups, history: `.${name}.rotations` } : {}),
    ...(o.compress ? { compress: 'gzip' as const } : {}),
    mode: 0o600,
  });
  stream.on('warning', onWarning);
  if (o.maxAgeDays > 0) {
    const backup = new RegExp(`^${escapeRegExp(stem)}-(\\d{4}-\\d{2}-\\d{2})T(\\d{2})-(\\d{2})-(\\d{2})\\.(\\d{3})(?:-\\d+)?${escapeRegExp(ext)}(?:\\.gz)?$`);
    const prune = () => {
      try { removeBackupsOlderThan(dir, backup, Date.now() - o.maxAgeDays * dayMs); } catch (err) { onWarning(err as Error); }
    };
    stream.on('rotated', prune);
    prune();
  }
  return stream;
}

/** lumberjack's MaxAge: by the time a backup's name records, not its mtime */
function removeBackupsOlderThan(dir: string, backup: RegExp, cutoff: number): void {
  for (const file of readdirSync(dir)) {
    const m = backup.exec(file);
    if (!m) continue;
    const time = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
    if (time < cutoff) unlinkSync(join(dir, file));
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
