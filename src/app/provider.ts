import { manualEffortProblem } from "../providers/anthropic-thinking.js";
import { httpFetch } from "../providers/http-transport.js";
import { anthropicImages, openaiImages, type ProviderImages } from "../runner/image-budget.js";
import type { ResponsesSwitch } from "../session/records.js";
import type { ModelClient } from "../types.js";
import { UsageError } from "./exit.js";
import type { AgentSettings } from "./settings.js";

export const defaultModel = "claude-sonnet-5-5";

/** The provider's key is not in the environment: what to set, in one line. */
export class MissingKeyError extends UsageError {}

/** A client whose every request fails with `error`: a session opened without its key. */
const refusing = (error: Error): ModelClient => ({
  // biome-ignore lint/correctness/useYield: it fails before its first event
  async *stream() {
    throw error;
  },
});

/**
 * Checks the provider's configuration now; loads its SDK only when the client is made. A missing
 * key throws a `MissingKeyError`, or, with `keyLater` (an editor's agent, which must answer the
 * editor first), makes a client whose every request fails with it.
 */
export function providerFor(
  args: Pick<
    AgentSettings,
    "provider" | "model" | "baseURL" | "thinking" | "keyLater" | "maxRetries"
  >,
  env: NodeJS.ProcessEnv,
): {
  model: string;
  /** What the provider's API takes of images, for the runner. */
  images: ProviderImages;
  /**
   * `tell` prints a notice of the client on stderr; `sessionId` is known once a session began;
   * `record` writes a switch to the Responses API in the session.
   */
  client(
    tell: (notice: string) => void,
    sessionId: () => string | undefined,
    record: (change: ResponsesSwitch) => Promise<void>,
  ): Promise<ModelClient>;
} {
  /** What both clients take from the flags. */
  const common = {
    fetch: httpFetch,
    ...(args.baseURL !== undefined && { baseURL: args.baseURL }),
    ...(args.thinking !== undefined && { thinking: args.thinking }),
    // Every retry the runner's, so each is recorded and told (`--max-retries`).
    ...(args.maxRetries !== undefined && { maxRetries: 0 }),
  };
  const missing = (model: string, images: ProviderImages, message: string) => {
    const error = new MissingKeyError(message);
    if (!args.keyLater) throw error;
    return { model, images, client: async () => refusing(error) };
  };
  if (args.provider !== "anthropic") {
    const apiKey = env.OPENAI_API_KEY || undefined;
    const model = args.model ?? "";
    if (!apiKey && args.baseURL === undefined) {
      return missing(
        model,
        openaiImages,
        "OPENAI_API_KEY is not set: export it, or point --base-url (OPENAI_BASE_URL) at a local server",
      );
    }
    const openai = { model, ...common, ...(apiKey && { apiKey }) };
    if (args.provider === "openai-responses") {
      return {
        model,
        images: openaiImages,
        client: async (_tell, sessionId) => {
          const { OpenAIResponsesModelClient } = await import("../providers/openai-responses.js");
          return new OpenAIResponsesModelClient({ ...openai, promptCacheKey: sessionId });
        },
      };
    }
    // Chat Completions, switched to the Responses API of the same endpoint when the model
    // refuses tools there and names it (gpt-6); recorded, and said in one line.
    return {
      model,
      images: openaiImages,
      client: async (tell, sessionId, record) => {
        const [{ OpenAIModelClient }, { ResponsesSwitchClient }] = await Promise.all([
          import("../providers/openai.js"),
          import("../providers/responses-switch.js"),
        ]);
        return new ResponsesSwitchClient({
          model,
          chat: (reasoningOff) =>
            new OpenAIModelClient({
              ...openai,
              ...(reasoningOff && { thinking: "off" }),
              reasoningOffForTools: false,
              onNotice: tell,
            }),
          responses: async () => {
            const { OpenAIResponsesModelClient } = await import("../providers/openai-responses.js");
            return new OpenAIResponsesModelClient({ ...openai, promptCacheKey: sessionId });
          },
          tell,
          switched: (reason) => record({ model, reason }),
        });
      },
    };
  }
  const apiKey = env.ANTHROPIC_API_KEY;
  const model = args.model ?? defaultModel;
  const effortProblem = manualEffortProblem(model, args.thinking);
  if (effortProblem !== undefined) throw new UsageError(effortProblem);
  if (!apiKey)
    return missing(
      model,
      anthropicImages,
      "ANTHROPIC_API_KEY is not set: export your Anthropic API key in it",
    );
  return {
    model,
    images: anthropicImages,
    client: async () => {
      const { AnthropicModelClient } = await import("../providers/anthropic.js");
      return new AnthropicModelClient({ apiKey, model, ...common });
    },
  };
}
