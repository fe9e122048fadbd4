/**
 * SelfSubjectReview (`authentication.orch.io/v1`): who the server thinks the caller is, after
 * impersonation; `kubectl auth whoami` asks for it. Answered, never stored.
 */
import { errors } from '../../status/status-error.js';
import { builtinKind, type KindDeclaration } from '../kind.js';
import { typeAndMeta } from '../meta.js';
import { formatTime } from '../schema.js';
import { s } from '../schema/builtin-structural.js';
import { authenticationGroup, unstoredKindBehaviour } from './group.js';
import { userInfoBody, userInfoStructural } from './user-info.js';

const selfSubjectReviewStatus = s.struct('SelfSubjectReviewStatus', {
  userInfo: userInfoStructural,
}, 'SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user.', { proto: { userInfo: 1 } });

export const selfSubjectReviewKind: KindDeclaration = builtinKind({
  group: authenticationGroup, version: 'v1', kind: 'SelfSubjectReview', listKind: 'SelfSubjectReviewList',
  resource: 'selfsubjectreviews', singular: 'selfsubjectreview', shortNames: [], namespaced: false,
  verbs: ['create'],
  structural: s.struct('SelfSubjectReview', typeAndMeta({
    status: selfSubjectReviewStatus,
  }), 'SelfSubjectReview contains the user information that the kube-apiserver has about the user making this request. When using impersonation, users will receive the user info of the user being impersonated.  If impersonation or request header authentication is used, any extra keys will have their case ignored and returned as lowercase.', { proto: { metadata: 1, status: 2 } }),
  ...unstoredKindBehaviour,
  virtualCreate(_body, ctx) {
    if (!ctx.user) throw errors.badRequest('no user present on request');
    return { metadata: { creationTimestamp: formatTime(ctx.now) }, status: { userInfo: userInfoBody(ctx.user) } };
  },
});
