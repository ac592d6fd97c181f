import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * One loopback endpoint in front of two strict servers, as OpenAI's is one address for both APIs:
 * `/v1/responses` goes to `responses`, every other path to `chat`. Bodies and answers (streams
 * included) pass through unchanged.
 */
export async function startOpenAIEndpoint(
  chat: { url: string },
  responses: { url: string },
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? "/", req.url === "/v1/responses" ? responses.url : chat.url);
    const forward = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on("error", () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
