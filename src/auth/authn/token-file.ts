/**
 * The static token file (`--token-auth-file`): CSV records `token,user,uid[,"group1,group2"]`,
 * read once at start, as kube-apiserver reads it. Records with an empty token are skipped and a
 * repeated token's last record wins, each with a warning that names the record, not the token.
 */
import { readFileSync } from 'node:fs';
import type { UserInfo } from '../user.js';
import { parseCsv } from './csv.js';
import type { BearerToken, TokenAuthenticator, TokenResult } from './token.js';

export class TokenFileAuthenticator implements TokenAuthenticator {
  readonly name = 'token-file';

  private constructor(private readonly tokens: ReadonlyMap<string, UserInfo>) {}

  /** Throws with the file's name on unreadable or malformed files. */
  static load(path: string, warn: (message: string) => void): TokenFileAuthenticator {
    let records: string[][];
    try {
      records = parseCsv(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new Error(`token file '${path}': ${(err as Error).message}`);
    }
    const tokens = new Map<string, UserInfo>();
    let recordNumber = 0;
    for (const record of records) {
      if (record.length < 3) {
        throw new Error(`token file '${path}' must have at least 3 columns (token, user name, user uid), found ${record.length}`);
      }
      recordNumber++;
      const [token, name, uid, groups] = record;
      if (token === '') {
        warn(`empty token has been found in token file '${path}', record number '${recordNumber}'`);
        continue;
      }
      if (tokens.has(token)) warn(`duplicate token has been found in token file '${path}', record number '${recordNumber}'`);
      const user: UserInfo = { name, uid, groups: groups === undefined ? [] : groups.split(',') };
      tokens.set(token, Object.freeze(user));
    }
    return new TokenFileAuthenticator(tokens);
  }

  authenticateToken(token: BearerToken): TokenResult {
    const user = this.tokens.get(token.value);
    return user ? { user } : undefined;
  }
}
