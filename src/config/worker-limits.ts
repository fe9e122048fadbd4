/**
 * The V8 limits of the server's worker threads: the storage writer and the watch encoders. Their
 * young generation is capped at 8 MiB. Left to V8, each grew it to tens of MiB under fan-out load
 * though what they allocate dies young either way: at 1,000 watchers the server's RSS was
 * 311-327 MiB, with the cap 254-261 MiB, at the same latency, and creates, GETs, updates and
 * deletes cost the same CPU (docs/decisions.md, "Worker threads' young generation").
 */
import type { ResourceLimits } from 'node:worker_threads';

export const workerResourceLimits: ResourceLimits = { maxYoungGenerationSizeMb: 8 };
