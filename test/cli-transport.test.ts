import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { connect, type Server } from "node:net";
import { join } from "node:path";
import { createServer as createTlsServer } from "node:tls";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { useCleanup } from "./support/cleanup.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

const setup = useCliSetup();
const tempDir = useTempDirs();
const track = useCleanup();

/** A self-signed certificate for 127.0.0.1, made for the test by the openssl command. */
async function selfSigned(dir: string): Promise<{ key: string; cert: string; certFile: string }> {
  const keyFile = join(dir, "key.pem");
  const certFile = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"],
      ...["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
      ...["-keyout", keyFile, "-out", certFile],
    ],
    { stdio: "ignore" },
  );
  return { key: await readFile(keyFile, "utf8"), cert: await readFile(certFile, "utf8"), certFile };
}

/** HTTPS in front of a plain HTTP server: TLS ends here, the bytes go on to `port`. */
async function tlsFront(
  port: number,
  key: string,
  cert: string,
): Promise<{ url: string; close(): void }> {
  const server: Server = createTlsServer({ key, cert }, (secure) => {
    const plain = connect(port, "127.0.0.1");
    secure.pipe(plain).pipe(secure);
    const end = () => {
      secure.destroy();
      plain.destroy();
    };
    secure.on("error", end);
    plain.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { url: `https://127.0.0.1:${address.port}`, close: () => server.close() };
}

describe("the CLI's HTTP transport", () => {
  it("runs a turn without loading Node's fetch stack (undici)", async () => {
    const { options, home } = await setup([stream(turn({ text: ["Hello."] }))]);
    const probe = join(home, "probe.mjs");
    const out = join(home, "modules.txt");
    await writeFile(
      probe,
      `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`,
    );
    const run = await runBin(["hi"], {
      ...options,
      env: { ...options.env, NODE_OPTIONS: `--import=${probe}` },
    });
    expect(run).toEqual({ code: 0, stdout: "Hello.\n", stderr: "" });
    const loaded = (await readFile(out, "utf8")).split("\n");
    expect(loaded).toContain("NativeModule http");
    expect(loaded.filter((name) => name.includes("undici"))).toEqual([]);
  }, 20_000);

  it("connects straight to the base URL whatever HTTP_PROXY and HTTPS_PROXY say, as Node 20's fetch does", async () => {
    const { server, options } = await setup([stream(turn({ text: ["Direct."] }))]);
    const dead = "http://127.0.0.1:9";
    const env = { ...options.env, HTTP_PROXY: dead, HTTPS_PROXY: dead, http_proxy: dead };
    expect(await runBin(["hi"], { ...options, env })).toEqual({
      code: 0,
      stdout: "Direct.\n",
      stderr: "",
    });
    expect(server.requests).toHaveLength(1);
  }, 20_000);

  it("talks HTTPS to a server whose certificate NODE_EXTRA_CA_CERTS trusts, and refuses it otherwise", async () => {
    const { server, options } = await setup([stream(turn({ text: ["Over TLS."] }))]);
    const { key, cert, certFile } = await selfSigned(await tempDir());
    const front = track(await tlsFront(Number(new URL(server.url).port), key, cert));
    const env = { ...options.env, ANTHROPIC_BASE_URL: front.url };

    const untrusted = await runBin(["hi"], { ...options, env });
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toBe(
      `mini-agent: could not reach ${front.url} (Connection error): check --base-url and the network\n`,
    );
    expect(server.requests).toHaveLength(0);

    const trusted = await runBin(["hi"], {
      ...options,
      env: { ...env, NODE_EXTRA_CA_CERTS: certFile },
    });
    expect(trusted).toEqual({ code: 0, stdout: "Over TLS.\n", stderr: "" });
    expect(server.requests).toHaveLength(1);
  }, 30_000);
});
