// k6/http (https://grafana.com/docs/k6/latest/javascript-api/k6-http/), answered by a fake API
// server that keeps ServiceAccounts in memory: enough for the scripts' checks to mean something.
import { state } from './state.mjs';

const paramKeys = new Set(['auth', 'cookies', 'headers', 'jar', 'redirects', 'tags', 'timeout', 'compression', 'responseType', 'responseCallback']);

function gjson(value, selector) {
  if (!selector) return value;
  let v = value;
  for (const part of selector.split('.')) {
    if (v === undefined || v === null) return undefined;
    v = part === '#' && Array.isArray(v) ? v.length : v[part];
  }
  return v;
}

function response(status, bodyObject, url) {
  const body = bodyObject === undefined ? '' : JSON.stringify(bodyObject);
  let parsed;
  return {
    status, body, url, headers: { 'Content-Type': 'application/json' }, error: '', error_code: 0,
    timings: { duration: 1, waiting: 1, sending: 0, receiving: 0, blocked: 0, connecting: 0, tls_handshaking: 0 },
    json(selector) { parsed ??= JSON.parse(body); return gjson(parsed, selector); },
  };
}

function labelsMatch(obj, selector) {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return (obj.metadata.labels || {})[k] === v;
  });
}

/** The fake server: /api/v1/namespaces[/NS/serviceaccounts[/NAME]] */
function serve(method, url, body) {
  const u = new URL(url);
  if (!/^https?:$/.test(u.protocol)) throw new Error(`not an http(s) URL: ${url}`);
  const m = /^\/api\/v1\/namespaces(?:\/([^/]+)\/serviceaccounts(?:\/([^/]+))?)?$/.exec(u.pathname);
  if (!m) return response(404, { kind: 'Status', code: 404 }, url);
  const [, ns, name] = m;
  const rv = () => String(++state.revision);
  if (!ns) {
    if (method !== 'POST') return response(405, { kind: 'Status', code: 405 }, url);
    const n = JSON.parse(body).metadata.name;
    if (state.namespaces.has(n)) return response(409, { kind: 'Status', code: 409 }, url);
    state.namespaces.add(n);
    return response(201, { kind: 'Namespace', metadata: { name: n, resourceVersion: rv() } }, url);
  }
  if (!state.namespaces.has(ns)) return response(404, { kind: 'Status', code: 404 }, url);
  const key = `${ns}`;
  if (!state.objects.has(key)) state.objects.set(key, new Map());
  const store = state.objects.get(key);
  const selector = u.searchParams.get('labelSelector');
  if (!name) {
    if (method === 'POST') {
      const obj = JSON.parse(body);
      if (store.has(obj.metadata.name)) return response(409, { kind: 'Status', code: 409 }, url);
      obj.metadata.namespace = ns;
      obj.metadata.resourceVersion = rv();
      store.set(obj.metadata.name, obj);
      return response(201, obj, url);
    }
    if (method === 'GET') {
      const all = [...store.values()].filter((o) => labelsMatch(o, selector));
      const limit = Number(u.searchParams.get('limit') || 0);
      const from = Number(u.searchParams.get('continue') || 0);
      const items = limit ? all.slice(from, from + limit) : all;
      const more = limit && from + limit < all.length;
      return response(200, { kind: 'ServiceAccountList', metadata: { resourceVersion: String(state.revision), ...(more ? { continue: String(from + limit) } : {}) }, items }, url);
    }
    if (method === 'DELETE') {
      for (const [n, o] of store) if (labelsMatch(o, selector)) store.delete(n);
      return response(200, { kind: 'Status', status: 'Success' }, url);
    }
    return response(405, { kind: 'Status', code: 405 }, url);
  }
  const existing = store.get(name);
  if (!existing) return response(404, { kind: 'Status', code: 404 }, url);
  if (method === 'GET') return response(200, existing, url);
  if (method === 'PUT') {
    const obj = JSON.parse(body);
    obj.metadata.namespace = ns;
    obj.metadata.resourceVersion = rv();
    store.set(name, obj);
    return response(200, obj, url);
  }
  if (method === 'DELETE') { store.delete(name); return response(200, existing, url); }
  return response(405, { kind: 'Status', code: 405 }, url);
}

export function request(method, url, body, params) {
  if (typeof method !== 'string' || typeof url !== 'string') throw new TypeError('request(method, url, [body], [params])');
  if (params !== undefined && params !== null) {
    for (const k of Object.keys(params)) if (!paramKeys.has(k)) throw new Error(`unknown k6/http Params field '${k}'`);
    if (params.tags && typeof params.tags !== 'object') throw new TypeError('Params.tags must be an object');
    if (params.responseCallback && !params.responseCallback.__expectedStatuses) throw new TypeError('Params.responseCallback must come from http.expectedStatuses');
  }
  if (body !== null && body !== undefined && typeof body !== 'string' && typeof body !== 'object') throw new TypeError('body must be a string or object');
  state.requests.push({ method, url, tags: params?.tags ?? {} });
  return serve(method, url, body);
}

export const get = (url, params) => request('GET', url, null, params);
export const head = (url, params) => request('HEAD', url, null, params);
export const post = (url, body, params) => request('POST', url, body, params);
export const put = (url, body, params) => request('PUT', url, body, params);
export const patch = (url, body, params) => request('PATCH', url, body, params);
export const del = (url, body, params) => request('DELETE', url, body, params);
export const options = (url, body, params) => request('OPTIONS', url, body, params);

export function batch(requests) {
  const one = (r) => {
    if (typeof r === 'string') return request('GET', r);
    if (Array.isArray(r)) return request(r[0], r[1], r[2], r[3]);
    return request(r.method, r.url, r.body, r.params);
  };
  return Array.isArray(requests) ? requests.map(one) : Object.fromEntries(Object.entries(requests).map(([k, r]) => [k, one(r)]));
}

export function expectedStatuses(...statuses) {
  for (const s of statuses) if (typeof s !== 'number' && !(typeof s === 'object' && 'min' in s && 'max' in s)) throw new TypeError('expectedStatuses takes status codes or {min, max}');
  return { __expectedStatuses: statuses };
}

export function setResponseCallback(callback) {
  if (callback !== null && !callback.__expectedStatuses) throw new TypeError('setResponseCallback takes http.expectedStatuses(...) or null');
}

export function file(data, filename, contentType) { return { data, filename, content_type: contentType }; }

export default { request, get, head, post, put, patch, del, options, batch, expectedStatuses, setResponseCallback, file };
