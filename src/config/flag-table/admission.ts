/** Admission flags: which plugins run beside the defaults, and their configuration file. */
import { type AnyFlagSpec, quote } from '../flag-spec.js';

/** The admission plugins this server has, and those on without --enable-admission-plugins */
const ADMISSION_PLUGINS = ['EventRateLimit', 'NamespaceLifecycle'];
const DEFAULT_ADMISSION_PLUGINS = ['NamespaceLifecycle'];

export const ADMISSION_FLAGS: readonly AnyFlagSpec[] = [
  {
    name: 'admission-control-config-file',
    type: 'string',
    key: 'admissionControlConfigFile',
    help: 'File with admission control configuration (an AdmissionConfiguration of apiserver.config.orch.io/v1 or apiserver.config.k8s.io/v1).',
  },
  {
    name: 'enable-admission-plugins',
    type: 'stringList',
    key: 'enableAdmissionPlugins',
    default: [],
    help:
      `admission plugins that should be enabled in addition to default enabled ones (${DEFAULT_ADMISSION_PLUGINS.join(', ')}). ` +
      `Comma-delimited list of admission plugins: ${ADMISSION_PLUGINS.join(', ')}. The order of plugins in this flag does not matter.`,
    validate: (plugins) => {
      const unknown = plugins.find((p) => !ADMISSION_PLUGINS.includes(p));
      return unknown === undefined ? undefined : `enable-admission-plugins plugin ${quote(unknown)} is unknown`;
    },
  },
];
