/**
 * What a request path and method mean (k8s.io/apiserver's RequestInfoFactory): a resource
 * request names group, version, namespace, resource, name and subresource, and has a verb;
 * anything else is a non-resource request (health, version, discovery roots). The path is taken
 * as sent (see request-target.ts): its segments are decoded one by one and never resolved.
 */
import { parseBoolParam } from './query.js';
import { pathSegments } from './request-target.js';

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** the HTTP method as sent */
  method: string;
  /** resource verbs (get, list, watch, create, ...) or the lower-cased method for non-resource requests */
  verb: string;
  apiPrefix?: 'api' | 'apis';
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** the legacy /watch/ path form */
  legacyWatch: boolean;
  /** streams until the client or the server ends it (watches): exempt from the request timeout */
  longRunning: boolean;
}

const namespaceSubresources = new Set(['status', 'finalize']);

export function requestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false, path, method, verb: method.toLowerCase(), apiGroup: '', apiVersion: '',
    namespace: '', resource: '', subresource: '', name: '', legacyWatch: false, longRunning: false,
  };
  let parts = pathSegments(path);
  if (parts.length === 0 || (parts[0] !== 'api' && parts[0] !== 'apis')) return info;
  info.apiPrefix = parts[0] as 'api' | 'apis';
  parts = parts.slice(1);
  if (info.apiPrefix === 'apis') {
    if (parts.length < 3) return info; // /apis, /apis/<group>, /apis/<group>/<version>: discovery
    info.apiGroup = parts[0];
    parts = parts.slice(1);
  } else if (parts.length < 2) {
    return info; // /api, /api/v1: discovery
  }
  info.apiVersion = parts[0];
  parts = parts.slice(1);
  info.isResourceRequest = true;

  if (parts[0] === 'watch') {
    info.legacyWatch = true;
    parts = parts.slice(1);
  }
  if (parts[0] === 'namespaces' && parts.length > 1) {
    info.namespace = parts[1];
    // /namespaces/<ns>/<resource>...; but /namespaces/<ns>/status is the namespace's own subresource
    if (parts.length > 2 && !namespaceSubresources.has(parts[2])) parts = parts.slice(2);
  }
  info.resource = parts[0] ?? '';
  if (parts.length >= 2) info.name = parts[1];
  if (parts.length >= 3) info.subresource = parts[2];
  if (parts.length > 3) info.subresource = parts.slice(2).join('/');

  switch (method) {
    case 'GET': case 'HEAD': info.verb = info.name ? 'get' : 'list'; break;
    case 'POST': info.verb = 'create'; break;
    case 'PUT': info.verb = 'update'; break;
    case 'PATCH': info.verb = 'patch'; break;
    case 'DELETE': info.verb = info.name ? 'delete' : 'deletecollection'; break;
    default: info.verb = method.toLowerCase();
  }
  // a collection GET is a watch when `watch` reads as true (any value but "0" and "false", in any
  // case: watch=True from the Python client too); a named GET stays a get, as in RequestInfoFactory
  if (info.legacyWatch || (info.verb === 'list' && parseBoolParam(query, 'watch') === true)) {
    info.verb = 'watch';
  }
  info.longRunning = info.verb === 'watch';
  return info;
}
