/**
 * Secrets live in environment variables; their values never reach a session file or a command.
 *
 * The rule, in one sentence: a variable is secret when its name, cut into words at `_`, `-`,
 * `.`, `/`, `:` and lower-to-upper case changes, has a secret word (`SECRET_WORDS`, plurals
 * too: KEY, SECRET, TOKEN, PASSWORD, PW, JWT, SESSION, COOKIE, HMAC, SALT, SEED, WEBHOOK, DSN,
 * …) or a word that ends in KEY, TOKEN, SECRET, PASSWORD, PASSWD or PASSPHRASE (`PGPASSWORD`,
 * `_authToken`, `SSH_PRIVATEKEY`), unless the name is an ordinary one (`ORDINARY_NAMES`), or when
 * its value holds credentials: a URL with a password or a token of 16+ characters as its user
 * (`scheme://user:password@…`), a `name=value` pair whose name has a secret word, in a URL query
 * or a connection string (`?key=…`, `&api-key=…`, `;AccountKey=…`, ` password=…`), or a webhook
 * URL (a host or path part `hooks` or `webhooks`: the whole URL is the secret).
 *
 * So `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, `MYSQL_PWD`, `DEPLOY_KEY`, `GH_TOKEN`, `BW_SESSION`,
 * `DB_PW`, a `DATABASE_URL` with a password and an `ANTHROPIC_BASE_URL` with `?key=` are secret;
 * `PWD`, `OLDPWD`, `XDG_SESSION_TYPE`, `KEYBOARD_LAYOUT`, `TOKENIZERS_PARALLELISM` and
 * `GIT_AUTHOR_NAME` are not. `SSH_AUTH_SOCK` is secret: it is a path, but whoever can reach it
 * can sign with the user's SSH keys; so is `DBUS_SESSION_BUS_ADDRESS`, whose bus can start
 * programs outside any sandbox.
 */

const SECRET_WORDS = new Set([
  "KEY",
  "SECRET",
  "TOKEN",
  "PASSWORD",
  "PASSWD",
  "PASS",
  "PW",
  "PWD",
  "PASSPHRASE",
  "PAT",
  "AUTH",
  "CREDENTIAL",
  "CREDS",
  "PRIVATE",
  "SIGNING",
  "SIG",
  "SIGNATURE",
  "JWT",
  "SESSION",
  "COOKIE",
  "HMAC",
  "SALT",
  "SEED",
  "WEBHOOK",
  "DSN",
]);
const SECRET_ENDINGS = ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE"];
/** Words that end in KEY and name no key. */
const NOT_KEYS = new Set(["MONKEY", "HOTKEY", "LESSKEY"]);
/**
 * Ordinary variables a secret word would catch: the shell's working folder and the desktop
 * session's descriptions (its type, class, id; the session manager's socket address).
 */
const ORDINARY_NAMES = new Set(["PWD", "DESKTOP_SESSION", "SESSION_MANAGER"]);
const ORDINARY_PREFIX = "XDG_SESSION_";

/** `scheme://userinfo@`: group 1 is the userinfo, group 2 the password when there is one. */
const URL_CREDENTIALS = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/([^\s/?#@:]*(?::([^\s/?#@]*))?)@/g;
const TOKEN_AS_USER = 16;
/**
 * `name=value` at the start of the value or after `?`, `&`, `;` or a space: group 1 is the
 * name, group 2 a quoted value, group 3 a plain one (up to the next `&`, `;` or space).
 */
const PAIR = /(?:^|[?&;\s])([A-Za-z0-9_.-]+)=(?:'([^']*)'|"([^"]*)"|([^&;\s]+))/g;
const URL = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#]+[^\s?#]*/g;
const WEBHOOK_PART = /^(?:web)?hooks?$/i;

/** Values shorter than this are not redacted: they would match ordinary words everywhere. */
export const MIN_REDACTED_LENGTH = 8;

/** Whether the name alone makes a variable secret (the first half of the rule). */
export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  if (ORDINARY_NAMES.has(upper) || upper.startsWith(ORDINARY_PREFIX)) return false;
  return hasSecretWord(name);
}

/** Whether a variable is secret by its name or by credentials in its value. */
export function isSecretVariable(name: string, value: string | undefined): boolean {
  const text = value ?? "";
  return isSecretName(name) || credentialsIn(text).length > 0 || isWebhook(text);
}

/** `env` without its secret variables: what a command may see. */
export function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([name, value]) => !isSecretVariable(name, value)),
  );
}

/**
 * Replaces, in one string, every value of a secret variable and every credential found in one
 * (a URL's user and password, a secret pair's value: raw, percent-decoded and without base64
 * `=` padding), raw or
 * JSON-escaped, by `[redacted]`, the longest first; values shorter than `MIN_REDACTED_LENGTH`
 * are left. Callers apply it to each string value before serialising, so a secret that happens
 * to be a JSON word can never change a record's structure.
 */
export function secretRedactor(env: NodeJS.ProcessEnv = process.env): (text: string) => string {
  const values = Object.entries(env)
    .flatMap(([name, value]) =>
      value !== undefined && isSecretVariable(name, value) ? [value, ...credentialsIn(value)] : [],
    )
    .filter((value) => value.length >= MIN_REDACTED_LENGTH)
    .flatMap((value) => [value, JSON.stringify(value).slice(1, -1)])
    .sort((a, b) => b.length - a.length);
  const unique = [...new Set(values)];
  if (unique.length === 0) return (text) => text;
  return (text) => unique.reduce((out, secret) => out.replaceAll(secret, "[redacted]"), text);
}

/** The name's words (split as the rule says) hold a secret word or a secret ending. */
function hasSecretWord(name: string): boolean {
  const words = name
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toUpperCase()
    .split(/[^A-Z0-9]+/);
  return words.some((word) => {
    const singular = word.endsWith("S") ? word.slice(0, -1) : word;
    return [word, singular].some(
      (form) =>
        SECRET_WORDS.has(form) ||
        (!NOT_KEYS.has(form) && SECRET_ENDINGS.some((end) => form.endsWith(end))),
    );
  });
}

/** The credentials in `value`: URL userinfo and passwords, and the values of secret pairs. */
function credentialsIn(value: string): string[] {
  const fromUrls = [...value.matchAll(URL_CREDENTIALS)].flatMap(([, userinfo = "", password]) =>
    password || userinfo.length >= TOKEN_AS_USER ? [userinfo, ...(password ? [password] : [])] : [],
  );
  const fromPairs = [...value.matchAll(PAIR)].flatMap(([, name = "", ...quotedOrPlain]) => {
    const found = quotedOrPlain.find((part) => part !== undefined) ?? "";
    return hasSecretWord(name) ? [found, decoded(found), found.replace(/=+$/, "")] : [];
  });
  return [...new Set([...fromUrls, ...fromPairs])].filter((part) => part !== "");
}

/** A URL in `value` whose host or path has a part `hook(s)` or `webhook(s)`. */
function isWebhook(value: string): boolean {
  return [...value.matchAll(URL)].some(([url]) =>
    url
      .replace(/^[^:]+:\/\/([^/]*@)?/, "")
      .split(/[./]/)
      .some((part) => WEBHOOK_PART.test(part)),
  );
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
