import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as secrets from "../src/secrets.js";
import { Session } from "../src/session.js";
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
};

/** The credential parts of the URL values: they must not survive anywhere either. */
const urlPasswords = [
  "pg-url-canary-35",
  "ghs-url-canary-36",
  "redis-url-canary-37",
  "proxy-url-canary-38",
  "0123456789abcdefcanary39",
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
    for (const value of [...Object.values(secretCorpus), ...urlPasswords]) {
      expect(result.content).not.toContain(value);
    }
    const lines = result.content.split("\n");
    // bash sets PWD to the folder it runs in; the rule keeping PWD is asserted above.
    const { PWD: _bashSetsIt, ...kept } = controls;
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
    await session.appendApproval({ toolCallId: "c1", tool: "bash", approved: true, by: "user" });
    await session.close();
    const names = await readdir(dir);
    expect(names).toEqual(["s.jsonl"]);
    const text = (await Promise.all(names.map((name) => readFile(join(dir, name), "utf8")))).join();
    for (const value of [...Object.values(secretCorpus), ...urlPasswords]) {
      expect(text).not.toContain(value);
      expect(text).not.toContain(JSON.stringify(value).slice(1, -1));
    }
    for (const value of Object.values(controls)) expect(text).toContain(value);
  });
});
