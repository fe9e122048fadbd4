/** The identity a request acts as (k8s.io/apiserver/pkg/authentication/user.Info). */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: readonly string[];
}

export const anonymousUser: UserInfo = Object.freeze({ name: 'system:anonymous', groups: Object.freeze(['system:unauthenticated']) });
export const authenticatedGroup = 'system:authenticated';
/** Members are allowed everything, whatever the authorization modes say. */
export const privilegedGroup = 'system:masters';
