/**
 * A conversion webhook's client config: its validation (apiserver's pkg/util/webhook validation.go,
 * ValidateWebhookURL and ValidateWebhookService, with Kubernetes' messages) and where it is called
 * (the DefaultServiceResolver: a service reference is https://<name>.<namespace>.svc:<port><path>,
 * its certificate verified for the server name <name>.<namespace>.svc).
 */
import { isDns1123Subdomain } from '../api/validation/names.js';
import { fieldErrors, type FieldError } from '../status/status-error.js';
import type { WebhookClientConfig } from './crd-types.js';

/** The port of a service reference that gives none (SetDefaults_ServiceReference). */
export const defaultServicePort = 443;

const urlForm = '; desired format: https://host[/path]';

export function validateWebhookUrl(path: string, raw: string): FieldError[] {
  let u: URL;
  try {
    u = new URL(raw);
  } catch (err) {
    return [fieldErrors.required(path, `url must be a valid URL: ${(err as Error).message}${urlForm}`)];
  }
  const errs: FieldError[] = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') errs.push(fieldErrors.invalid(path, scheme, `'https' is the only allowed URL scheme${urlForm}`));
  if (!u.host) errs.push(fieldErrors.invalid(path, u.host, `host must be specified${urlForm}`));
  if (u.username || u.password) errs.push(fieldErrors.invalid(path, u.password ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
  if (u.hash.length > 1) errs.push(fieldErrors.invalid(path, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (u.search.length > 1) errs.push(fieldErrors.invalid(path, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return errs;
}

export function validateWebhookService(path: string, service: NonNullable<WebhookClientConfig['service']>): FieldError[] {
  const errs: FieldError[] = [];
  if (!service.name) errs.push(fieldErrors.required(`${path}.name`, ''));
  if (!service.namespace) errs.push(fieldErrors.required(`${path}.namespace`, ''));
  const port = service.port ?? defaultServicePort;
  if (!Number.isInteger(port) || port < 1 || port > 65535) errs.push(fieldErrors.invalid(`${path}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  const urlPath = service.path;
  if (urlPath === undefined || urlPath === '' || urlPath === '/') return errs;
  if (urlPath === '//') return [...errs, fieldErrors.invalid(`${path}.path`, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) errs.push(fieldErrors.invalid(`${path}.path`, urlPath, "must start with a '/'"));
  let rest = urlPath.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((segment, i) => {
    if (!segment) {
      errs.push(fieldErrors.invalid(`${path}.path`, urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const msg of isDns1123Subdomain(segment)) errs.push(fieldErrors.invalid(`${path}.path`, urlPath, `segment[${i}]: ${msg}`));
  });
  return errs;
}

/** Where the webhook is called: the URL to post to, the TLS server name, and the URL as client-go prints it. */
export interface WebhookTarget { url: URL; display: string }

/**
 * client-go asks the webhook to answer within its timeout (`?timeout=30s`), and says so in errors.
 * Throws for a service whose name makes no URL.
 */
export function webhookTarget(config: WebhookClientConfig, timeoutSeconds: number): WebhookTarget | undefined {
  const query = `timeout=${timeoutSeconds}s`;
  if (config.url) {
    const display = `${config.url}?${query}`;
    return { url: new URL(display), display };
  }
  const service = config.service;
  if (!service?.name || !service.namespace) return undefined;
  // node verifies the certificate for the URL's host name, as client-go's ServerName does
  const display = `https://${service.name}.${service.namespace}.svc:${service.port ?? defaultServicePort}${service.path ?? ''}?${query}`;
  try {
    return { url: new URL(display), display };
  } catch {
    // Kubernetes does not validate a service name's form: such a name fails at the call
    throw new Error(`parse ${JSON.stringify(display)}: invalid URL`);
  }
}
