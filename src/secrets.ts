/** Secrets live in environment variables; their values never reach a session file or a command. */

const SECRET_NAME = /(_API_KEY|_TOKEN|_SECRET|_PASSWORD)$/;

/** Names of variables whose values never leave the process: keys, tokens, secrets, passwords. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Replaces every secret environment value (8+ characters), raw or JSON-escaped, by `[redacted]`. */
export function secretRedactor(env: NodeJS.ProcessEnv = process.env): (text: string) => string {
  const values = Object.entries(env)
    .filter(([name, value]) => isSecretName(name) && value !== undefined && value.length >= 8)
    .flatMap(([, value]) => [value as string, JSON.stringify(value).slice(1, -1)])
    .sort((a, b) => b.length - a.length);
  const unique = [...new Set(values)];
  if (unique.length === 0) return (text) => text;
  return (text) => unique.reduce((out, secret) => out.replaceAll(secret, "[redacted]"), text);
}
