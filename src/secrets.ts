/**
 * Secrets live in environment variables; their values never reach a session file or a command.
 *
 * The rule, in one sentence: a variable is secret when its name, cut into words at `_`, `-`,
 * `.`, `/`, `:` and lower-to-upper case changes, has a word that is KEY, SECRET, TOKEN,
 * PASSWORD, PASSWD, PASS, PWD (but not `PWD` alone), PASSPHRASE, PAT, AUTH, CREDENTIAL(S),
 * CREDS, PRIVATE or SIGNING (plurals too), or a word that ends in PASSWORD, PASSWD, TOKEN,
 * SECRET, APIKEY or PASSPHRASE (`PGPASSWORD`, `_authToken`), or when its value holds credentials
 * in a URL (`scheme://user:password@…`, or a token of 16+ characters as the user).
 *
 * So `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, `MYSQL_PWD`, `DEPLOY_KEY`, `GH_TOKEN` and a
 * `DATABASE_URL` with a password are secret; `PWD`, `OLDPWD`, `KEYBOARD_LAYOUT`,
 * `TOKENIZERS_PARALLELISM` and `GIT_AUTHOR_NAME` are not. `SSH_AUTH_SOCK` is secret: it is a
 * path, but whoever can reach it can sign with the user's SSH keys.
 */

const SECRET_WORDS = new Set([
  "KEY",
  "KEYS",
  "SECRET",
  "SECRETS",
  "TOKEN",
  "TOKENS",
  "PASSWORD",
  "PASSWORDS",
  "PASSWD",
  "PASS",
  "PWD",
  "PASSPHRASE",
  "PAT",
  "AUTH",
  "CREDENTIAL",
  "CREDENTIALS",
  "CREDS",
  "PRIVATE",
  "SIGNING",
]);
const SECRET_ENDINGS = ["PASSWORD", "PASSWD", "TOKEN", "SECRET", "APIKEY", "PASSPHRASE"];
const NOT_SECRET = new Set(["PWD"]);

/** `scheme://userinfo@`: group 1 is the userinfo, group 2 the password when there is one. */
const URL_CREDENTIALS = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/([^\s/?#@:]*(?::([^\s/?#@]*))?)@/g;
const TOKEN_AS_USER = 16;

/** Values shorter than this are not redacted: they would match ordinary words everywhere. */
export const MIN_REDACTED_LENGTH = 8;

/** Whether the name alone makes a variable secret (the first half of the rule). */
export function isSecretName(name: string): boolean {
  if (NOT_SECRET.has(name.toUpperCase())) return false;
  const words = name
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toUpperCase()
    .split(/[^A-Z0-9]+/);
  return words.some(
    (word) => SECRET_WORDS.has(word) || SECRET_ENDINGS.some((end) => word.endsWith(end)),
  );
}

/** Whether a variable is secret by its name or by credentials in a URL in its value. */
export function isSecretVariable(name: string, value: string | undefined): boolean {
  return isSecretName(name) || urlCredentials(value ?? "").length > 0;
}

/** `env` without its secret variables: what a command may see. */
export function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([name, value]) => !isSecretVariable(name, value)),
  );
}

/**
 * Replaces, in one string, every value of a secret variable and every credential found in a URL
 * in one, raw or JSON-escaped, by `[redacted]`, the longest first; values shorter than
 * `MIN_REDACTED_LENGTH` are left. Callers apply it to each string value before serialising, so a
 * secret that happens to be a JSON word can never change a record's structure.
 */
export function secretRedactor(env: NodeJS.ProcessEnv = process.env): (text: string) => string {
  const values = Object.entries(env)
    .flatMap(([name, value]) =>
      value !== undefined && isSecretVariable(name, value) ? [value, ...urlCredentials(value)] : [],
    )
    .filter((value) => value.length >= MIN_REDACTED_LENGTH)
    .flatMap((value) => [value, JSON.stringify(value).slice(1, -1)])
    .sort((a, b) => b.length - a.length);
  const unique = [...new Set(values)];
  if (unique.length === 0) return (text) => text;
  return (text) => unique.reduce((out, secret) => out.replaceAll(secret, "[redacted]"), text);
}

/** The userinfo and password of every URL in `value` that carries credentials. */
function urlCredentials(value: string): string[] {
  return [...value.matchAll(URL_CREDENTIALS)].flatMap(([, userinfo = "", password]) =>
    password || userinfo.length >= TOKEN_AS_USER ? [userinfo, ...(password ? [password] : [])] : [],
  );
}
