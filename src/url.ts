/**
 * A base URL may carry credentials: `https://user:pass@host/v1` or `?key=...` (some gateways
 * take the key in the query). Nothing mini-agent prints (an error, the JSON result, the help for
 * a wrong flag) shows them: `shownURL` is how a URL is shown, `scrubURLs` cleans any text that
 * might contain one. A query value is secret when its name contains key, token, secret, pass,
 * auth, sig or credential.
 */
export function shownURL(url: string): string {
  return url.replace(USERINFO, "$1***@").replace(SECRET_QUERY, "$1$2=***");
}

/**
 * `text` with every URL in it shown as `shownURL` shows it, and every credential of `baseURL`
 * (4+ characters) replaced by `***` wherever it appears, even outside a URL or percent-encoded.
 */
export function scrubURLs(text: string, baseURL?: string): string {
  let out = text.replace(USERINFO_ANYWHERE, "$1***@").replace(SECRET_QUERY, "$1$2=***");
  for (const secret of baseURL ? credentials(baseURL) : []) out = out.replaceAll(secret, "***");
  return out;
}

const USERINFO = /^((?:[a-z][a-z\d+.-]*:)?\/\/)[^/?#@]*@/i;
const USERINFO_ANYWHERE = /(\b[a-z][a-z\d+.-]*:\/\/)[^/?#@\s]*@/gi;
const SECRET_QUERY =
  /([?&;])([^=&#\s]*(?:key|token|secret|pass|auth|sig|credential)[^=&#\s]*)=[^&#;\s]*/gi;

/** The user name, password and secret query values of `url`, raw and decoded, longest first. */
function credentials(url: string): string[] {
  const found: string[] = [];
  const userinfo = /^(?:[a-z][a-z\d+.-]*:)?\/\/([^/?#@]*)@/i.exec(url)?.[1];
  if (userinfo) found.push(userinfo, ...userinfo.split(":"));
  for (const match of url.matchAll(SECRET_QUERY)) {
    const value = match[0].slice(match[0].indexOf("=") + 1);
    found.push(value);
  }
  const decoded = found.map((value) => {
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  });
  return [...new Set([...found, ...decoded])]
    .filter((value) => value.length >= 4)
    .sort((a, b) => b.length - a.length);
}
