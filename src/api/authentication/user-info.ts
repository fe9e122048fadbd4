/** UserInfo as the authentication API carries it (k8s.io/api/authentication/v1.UserInfo). */
import type { UserInfo } from '../../auth/user.js';
import { s } from '../schema/builtin-structural.js';

export const userInfoStructural = s.struct('UserInfo', {
  username: s.string('The name that uniquely identifies this user among all active users.'),
  uid: s.string('A unique value that identifies this user across time. If this user is deleted and another user by the same name is added, they will have different UIDs.'),
  groups: s.atomicList(s.string(), 'The names of groups this user is a part of.'),
  extra: s.map(s.atomicList(s.string()), 'Any additional information provided by the authenticator.'),
}, 'UserInfo holds the information about the user needed to implement the user.Info interface.', { proto: { username: 1, uid: 2, groups: 3, extra: 4 } });

/** The wire form: empty fields left out as Go's omitempty leaves them out. */
export interface UserInfoBody {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export function userInfoBody(user: UserInfo): UserInfoBody {
  const body: UserInfoBody = {};
  if (user.name) body.username = user.name;
  if (user.uid) body.uid = user.uid;
  if (user.groups.length > 0) body.groups = [...user.groups];
  const extra = Object.entries(user.extra ?? {});
  if (extra.length > 0) body.extra = Object.fromEntries(extra.map(([k, v]) => [k, [...v]]));
  return body;
}
