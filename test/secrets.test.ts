import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as secrets from "../src/secrets.js";
import { Session } from "../src/session/session.js";
import { bashTool } from "../src/tools/bash.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();

/** Names people give their credentials, each with a value that must never leave the process. */
const secretCorpus: Record<string, string> = {
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYcanary01",
  AWS_ACCESS_KEY_ID: "AKIACANARY0123456789",
  AWS_SESSION_TOKEN: "FwoGZXIvYXdzEcanary02",
  PGPASSWORD: "pg-canary-password-03",
  MYSQL_PWD: "mysql-canary-04",
  DEPLOY_KEY: "deploy-canary-key-05",
  STRIPE_SECRET_KEY_LIVE: "sk_live_canary0123456789",
  GH_TOKEN: "ghp_canary0123456789abcdef06",
  GITHUB_TOKEN: "ghs_canary0123456789abcdef07",
  NPM_TOKEN: "npm_canary0123456789abcd08",
  NODE_AUTH_TOKEN: "node-auth-canary-09",
  ANTHROPIC_API_KEY: "sk-ant-canary-0123456789-10",
  OPENAI_API_KEY: "sk-openai-canary-11",
  HF_TOKEN: "hf_canary0123456789ab12",
  DB_PASS: "db-pass-canary-13",
  REDIS_PASSWD: "redis-passwd-canary-14",
  SMTP_PASSWORD: "smtp-password-canary-15",
  GITLAB_PAT: "glpat-canary0123456789-16",
  AZURE_CLIENT_SECRET: "azure-client-canary-17",
  GOOGLE_APPLICATION_CREDENTIALS: "/home/u/.config/gcloud/canary-creds-18.json",
  DOCKER_AUTH_CONFIG: '{"auths":{"r":{"auth":"canary19"}}}',
  JWT_PRIVATE_KEY: "-----BEGIN PRIVATE KEY-----\ncanary-pem-20\n-----END PRIVATE KEY-----",
  GPG_SIGNING_KEY: "gpg-signing-canary-21",
  APIKEY: "plain-apikey-canary-22",
  PASSWORD: "plain-password-canary-23",
  TOKEN: "plain-token-canary-24",
  SECRET: "plain-secret-canary-25",
  DJANGO_SECRET_KEY: "django-canary-secret-26",
  VAULT_TOKEN: "hvs.canary0123456789-27",
  CI_JOB_TOKEN: "ci-job-canary-token-28",
  REGISTRY_CREDENTIALS: "registry-creds-canary-29",
  SSH_AUTH_SOCK: "/tmp/ssh-canary30/agent.1234",
  // Like SSH_AUTH_SOCK, an address that lends a capability: the session bus starts programs.
  DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1000/bus-canary-62",
  db_password: "lowercase-canary-31",
  awsSecretKey: "camel-case-canary-32",
  "npm_config_//registry.npmjs.org/:_authToken": "npmrc-auth-canary-33",
  ENCRYPTION_PASSPHRASE: "passphrase-canary-34",
  // Credentials inside URLs make any variable secret, whatever its name.
  DATABASE_URL: "postgres://app:pg-url-canary-35@db.internal:5432/app",
  REPO_REMOTE: "https://x-access-token:ghs-url-canary-36@github.com/o/r.git",
  REDIS_URL: "redis://:redis-url-canary-37@cache:6379/0",
  HTTPS_PROXY: "http://proxyuser:proxy-url-canary-38@proxy.internal:3128",
  SENTRY_DSN: "https://0123456789abcdefcanary39@o1.ingest.sentry.io/1",
  // Names whose words say secret.
  DB_PW: "db-pw-canary-40",
  ADMIN_PW: "admin-pw-canary-41",
  BW_SESSION: "bitwarden-session-canary-42",
  OP_SESSION_my: "onepassword-session-canary-43",
  SESSION_ID: "session-id-canary-44",
  CI_JOB_JWT: "eyJjwt-canary-45",
  JWT: "eyJbare-jwt-canary-46",
  COOKIE: "cookie-canary-47",
  HMAC: "hmac-canary-48",
  ENCRYPTION_SEED: "encryption-seed-canary-49",
  SIGNATURE_SALT: "signature-salt-canary-50",
  SSH_PRIVATEKEY: "ssh-privatekey-canary-51",
  SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T0/B0/slack-canary-52",
  PG_DSN: "host=h user=u password=dsn-canary-53 dbname=d",
  // Credentials in a connection string or a URL query make any variable secret.
  AZURE_STORAGE_CONNECTION_STRING:
    "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=azure-canary-54==;EndpointSuffix=core.windows.net",
  SERVICEBUS_CONNECTION:
    "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=sas-canary-55",
  SQLALCHEMY_DATABASE_URI: "postgresql://u@h/db?password=query-canary-56",
  ODBC_CONNECTION: "Driver={x};Server=h;Uid=u;Pwd='odbc canary 57';",
  ANTHROPIC_BASE_URL: "http://127.0.0.1:4000/?key=base-url-canary-58",
  OPENAI_BASE_URL: "https://gw.example/v1?api-version=1&api-key=base-url-canary-59",
  BLOB_URL: "https://x.blob.core.windows.net/c/f?sv=2024&sig=sas%2Bsig-canary-60",
  NOTIFY_URL: "https://discord.com/api/webhooks/123/discord-canary-61",
};

/**
 * The credential parts of the values (a URL's password, a query or connection-string value):
 * each must not survive anywhere either, even where it appears alone.
 */
const credentialParts = [
  "pg-url-canary-35",
  "ghs-url-canary-36",
  "redis-url-canary-37",
  "proxy-url-canary-38",
  "0123456789abcdefcanary39",
  "dsn-canary-53",
  "azure-canary-54==",
  "azure-canary-54",
  "sas-canary-55",
  "query-canary-56",
  "odbc canary 57",
  "base-url-canary-58",
  "base-url-canary-59",
  "sas%2Bsig-canary-60",
  "sas+sig-canary-60",
];

/** Variables that are not secrets and must reach the command as they are. */
const controls: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/home/control-home",
  PWD: "/work/control-pwd",
  // bash keeps OLDPWD only when it names a folder.
  OLDPWD: "/usr",
  LANG: "C.UTF-8",
  USER: "control-user",
  SHELL: "/bin/bash",
  KEYBOARD_LAYOUT: "control-dvorak",
  KEYMAP: "control-keymap",
  EDITOR: "control-editor",
  GIT_AUTHOR_NAME: "Control Author",
  TOKENIZERS_PARALLELISM: "control-false",
  PASSENGER_APP_ENV: "control-passenger",
  MONKEY_PATCH: "control-monkey",
  XAUTHORITY: "/home/control/.Xauthority",
  NODE_ENV: "control-production",
  PUBLIC_URL: "https://example.com/control-app",
  GIT_SSH_URL: "ssh://git@github.com/control/repo.git",
  TERM: "xterm-256color",
  XDG_SESSION_TYPE: "wayland",
  XDG_SESSION_ID: "control-3",
  XDG_SESSION_CLASS: "user",
  XDG_SESSION_DESKTOP: "control-gnome",
  DESKTOP_SESSION: "control-ubuntu",
  SESSION_MANAGER: "local/control-host:@/tmp/.ICE-unix/1234,unix/control-host:/tmp/.ICE-unix/1234",
  NODE_OPTIONS: "--max-old-space-size=4096 --enable-source-maps",
  PYTHONHASHSEED: "0",
  LS_COLORS: "rs=0:di=01;34:ln=01;36:*.key=00;33:*.tar=01;31",
  SEARCH_URL: "https://example.com/search?q=control-keyword&page=2",
  HOOK_SCRIPT: "/usr/local/bin/control-hook",
  HOTKEY: "control-ctrl-k",
};

describe("the secret rule", () => {
  it.each(Object.entries(secretCorpus))("counts %s as secret", (name, value) => {
    expect(secrets.isSecretVariable(name, value)).toBe(true);
  });

  it.each(Object.entries(controls))("leaves %s alone", (name, value) => {
    expect(secrets.isSecretVariable(name, value)).toBe(false);
  });

  it("keeps the controls and drops every secret from an environment", () => {
    expect(secrets.withoutSecrets({ ...secretCorpus, ...controls, UNSET: undefined })).toEqual({
      ...controls,
      UNSET: undefined,
    });
  });

  it("redacts values of 8+ characters and the credentials inside URLs, nothing shorter", () => {
    const redact = secrets.secretRedactor({
      DB_PASSWORD: "1",
      SHORT_TOKEN: "1234567",
      LONG_TOKEN: "12345678",
      DATABASE_URL: "postgres://u:pw@host/db",
      MIRROR: "https://bob:hunter22-longer@mirror.example/x",
    });
    expect(
      redact(
        "1 1234567 12345678 postgres://u:pw@host/db https://bob:hunter22-longer@other.example/ hunter22-longer",
      ),
    ).toBe("1 1234567 [redacted] [redacted] https://[redacted]@other.example/ [redacted]");
  });

  it("redacts the values of secret pairs in a connection string or a URL query, and the whole value", () => {
    const redact = secrets.secretRedactor({
      AZURE: "Protocol=https;AccountName=acct-visible;AccountKey=azure/key+01==;Suffix=x",
      DSN: "host=h user=dsn-user-visible password='two words!' dbname=d",
      API: "http://127.0.0.1:4000/v1?api-version=2024&api-key=query%2Bkey01&sig=sig-value-01",
      SHORT: "http://h/?token=1234567&key=12345678",
    });
    expect(
      redact(
        [
          "azure/key+01== acct-visible azure/key+01",
          "two words! dsn-user-visible",
          "query%2Bkey01 query+key01 sig-value-01 2024",
          "1234567 12345678",
          "Protocol=https;AccountName=acct-visible;AccountKey=azure/key+01==;Suffix=x",
        ].join("\n"),
      ),
    ).toBe(
      [
        "[redacted] acct-visible [redacted]",
        "[redacted] dsn-user-visible",
        "[redacted] [redacted] [redacted] 2024",
        "1234567 [redacted]",
        "[redacted]",
      ].join("\n"),
    );
  });

  it.each([
    ["key", "http://127.0.0.1:4000/?key=base-url-query-key"],
    ["api-key", "https://gw.example/openai?api-key=base-url-query-key"],
    ["access_token", "https://gw.example/v1?x=1&access_token=base-url-query-key"],
  ])("keeps a base URL with ?%s= from bash and its value from the session", async (_, url) => {
    const env = { ANTHROPIC_BASE_URL: url, OPENAI_BASE_URL: url, HOME: "/home/control" };
    expect(secrets.withoutSecrets(env)).toEqual({ HOME: "/home/control" });
    const redact = secrets.secretRedactor(env);
    expect(redact(`base ${url} alone base-url-query-key`)).toBe("base [redacted] alone [redacted]");
  });
});

describe("secret corpus", () => {
  it("never reaches bash's environment, and the controls do", async () => {
    const root = await tempDir();
    const bash = bashTool(root, {
      env: { ...secretCorpus, ...controls },
      sandbox: { mode: "off" },
    });
    const result = await bash.execute({ command: "env" });
    expect(result.isError).toBe(false);
    for (const value of [...Object.values(secretCorpus), ...credentialParts]) {
      expect(result.content).not.toContain(value);
    }
    const lines = result.content.split("\n");
    // bash sets PWD to the folder it runs in and the tool sets TERM=dumb; the rule keeping
    // both is asserted above.
    const { PWD: _bashSetsIt, TERM: _toolSetsIt, ...kept } = controls;
    for (const [name, value] of Object.entries(kept)) expect(lines).toContain(`${name}=${value}`);
    expect(lines).toContain(`PWD=${root}`);
  });

  it("never reaches a file of the session folder, and the controls do", async () => {
    const dir = await tempDir();
    const env = { ...secretCorpus, ...controls };
    const session = await Session.create({ dir, workspace: "/ws", model: "m", env, id: "s" });
    const everything = Object.entries(env).map(([name, value]) => `${name}=${value}`);
    await session.append({ role: "user", content: everything.join("\n") });
    await session.append({
      role: "assistant",
      content: "",
      toolCalls: [
        { id: "c1", name: "bash", input: { command: everything.join(" "), deep: [everything] } },
      ],
    });
    await session.append({
      role: "tool",
      toolCallId: "c1",
      content: JSON.stringify(env),
      isError: false,
    });
    await session.append({ role: "user", content: credentialParts.join("\n") });
    await session.record({
      type: "approval",
      toolCallId: "c1",
      tool: "bash",
      approved: true,
      by: "user",
    });
    await session.close();
    const names = await readdir(dir);
    expect(names).toEqual(["s.jsonl"]);
    const text = (await Promise.all(names.map((name) => readFile(join(dir, name), "utf8")))).join();
    for (const value of [...Object.values(secretCorpus), ...credentialParts]) {
      expect(text).not.toContain(value);
      expect(text).not.toContain(JSON.stringify(value).slice(1, -1));
    }
    for (const value of Object.values(controls)) expect(text).toContain(value);
  });
});
