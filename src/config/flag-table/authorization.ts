/** Authorization flags: the legacy mode list and webhook, or the structured configuration file, and their combined checks. */
import { parseDuration } from '../duration.js';
import type { FeatureGates } from '../feature-gates.js';
import { type AnyFlagSpec, FlagError, nonNegative, quote } from '../flag-spec.js';

const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'];

function validateAuthorizationModes(modes: string[]): string | undefined {
  if (modes.length === 0) return 'at least one authorization-mode must be passed';
  for (const mode of modes) {
    if (!AUTHORIZATION_MODES.includes(mode)) {
      return `authorization-mode ${quote(mode)} is not a valid mode`;
    }
  }
  if (new Set(modes).size !== modes.length) {
    return `authorization-mode [${modes.map(quote).join(' ')}] has mode specified more than once`;
  }
  return undefined;
}

export const AUTHORIZATION_FLAGS: readonly AnyFlagSpec[] = [
  {
    name: 'authorization-mode',
    type: 'stringList',
    key: 'authorizationModes',
    default: ['AlwaysAllow'],
    help:
      'Ordered list of plug-ins to do authorization on secure port. Defaults to AlwaysAllow if --authorization-config is not used. ' +
      `Comma-delimited list of: ${AUTHORIZATION_MODES.join(',')}.`,
    validate: validateAuthorizationModes,
  },
  {
    name: 'authorization-config',
    type: 'string',
    key: 'authorizationConfigFile',
    help: 'File with Authorization Configuration to configure the authorizer chain. Requires feature gate ' +
      'StructuredAuthorizationConfiguration. This flag is mutually exclusive with the other --authorization-mode and ' +
      '--authorization-webhook-* flags. Re-read when it changes.',
  },
  {
    name: 'authorization-policy-file',
    type: 'string',
    key: 'authorizationPolicyFile',
    help: 'File with authorization policy in json line by line format, used with --authorization-mode=ABAC, on the secure port.',
  },
  {
    name: 'authorization-webhook-cache-authorized-ttl',
    type: 'duration',
    key: 'authorizationWebhookCacheAuthorizedTtlMs',
    default: parseDuration('5m'),
    help: "The duration to cache 'authorized' responses from the webhook authorizer.",
    validate: nonNegative,
  },
  {
    name: 'authorization-webhook-cache-unauthorized-ttl',
    type: 'duration',
    key: 'authorizationWebhookCacheUnauthorizedTtlMs',
    default: parseDuration('30s'),
    help: "The duration to cache 'unauthorized' responses from the webhook authorizer.",
    validate: nonNegative,
  },
  {
    name: 'authorization-webhook-config-file',
    type: 'string',
    key: 'authorizationWebhookConfigFile',
    help: 'File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook. The API server ' +
      "will query the remote service to determine access on the API server's secure port.",
  },
  {
    name: 'authorization-webhook-version',
    type: 'string',
    key: 'authorizationWebhookVersion',
    default: 'v1beta1',
    help: 'The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook.',
    validate: (version) => (version === 'v1' || version === 'v1beta1'
      ? undefined
      : `unsupported authorization webhook version ${quote(version)}, supported versions are "v1", "v1beta1"`),
  },
];

/** kube-apiserver's authorization options validation (BuiltInAuthorizationOptions.Validate) */
export function validateAuthorizationOptions(values: Map<string, unknown>, explicit: ReadonlySet<string>): void {
  if (values.get('authorizationConfigFile')) {
    if (!(values.get('featureGates') as FeatureGates).enabled('StructuredAuthorizationConfiguration')) {
      throw new FlagError('--authorization-config cannot be used without enabling StructuredAuthorizationConfiguration feature flag');
    }
    const legacy = ['authorization-mode', 'authorization-webhook-config-file', 'authorization-webhook-version',
      'authorization-webhook-cache-authorized-ttl', 'authorization-webhook-cache-unauthorized-ttl'];
    if (legacy.some((flag) => explicit.has(flag))) {
      throw new FlagError('--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined');
    }
    return;
  }
  const modes = values.get('authorizationModes') as string[];
  for (const [mode, key, flag, what] of [
    ['ABAC', 'authorizationPolicyFile', 'authorization-policy-file', 'authorization policy file'],
    ['Webhook', 'authorizationWebhookConfigFile', 'authorization-webhook-config-file', 'authorization config file'],
  ] as const) {
    if (modes.includes(mode) && !values.get(key)) throw new FlagError(`authorization-mode ${mode}'s ${what} not passed`);
    if (!modes.includes(mode) && values.get(key)) throw new FlagError(`cannot specify --${flag} without mode ${mode}`);
  }
}
