/**
 * Work estimation (k8s.io/apiserver/pkg/util/flowcontrol/request): how many seats a request
 * occupies. A list, and a watch that starts with the current objects, reads about as many
 * objects as the collection holds (or its `limit`): one seat per 100 objects, 1 to 10 seats.
 * Everything else takes one seat.
 */
import type { RequestInfo } from '../http/request-info.js';

const objectsPerSeat = 100;
export const minimumSeats = 1;
export const maximumSeats = 10;

export function estimateWidth(info: RequestInfo, query: URLSearchParams | undefined, objectCount: (info: RequestInfo) => number): number {
  if (!info.isResourceRequest || info.name !== '') return minimumSeats;
  let listsObjects = info.verb === 'list';
  if (info.verb === 'watch') {
    // a watch from a given resourceVersion starts with no objects to send
    const rv = query?.get('resourceVersion') ?? '';
    const initial = query?.get('sendInitialEvents');
    listsObjects = initial === 'true' || (initial === null && (rv === '' || rv === '0'));
  }
  if (!listsObjects) return minimumSeats;
  let objects = objectCount(info);
  const limit = Number(query?.get('limit') ?? 0);
  if (limit > 0 && limit < objects) objects = limit;
  return Math.min(maximumSeats, Math.max(minimumSeats, Math.ceil(objects / objectsPerSeat)));
}
