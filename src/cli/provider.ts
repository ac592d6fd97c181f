import { httpFetch } from "../providers/http-transport.js";
import type { ModelClient } from "../types.js";
import { type CliArgs, UsageError } from "./args.js";

export const defaultModel = "claude-sonnet-5-5";

/** Checks the provider's configuration now; loads its SDK only when the client is made. */
export function providerFor(
  args: CliArgs,
  env: NodeJS.ProcessEnv,
): { model: string; client(): Promise<ModelClient> } {
  /** What both clients take from the flags. */
  const common = {
    fetch: httpFetch,
    ...(args.baseURL !== undefined && { baseURL: args.baseURL }),
    ...(args.thinking !== undefined && { thinking: args.thinking }),
  };
  if (args.provider === "openai") {
    const apiKey = env.OPENAI_API_KEY || undefined;
    if (!apiKey && args.baseURL === undefined) {
      throw new UsageError(
        "OPENAI_API_KEY is not set: export it, or point --base-url (OPENAI_BASE_URL) at a local server",
      );
    }
    const model = args.model ?? "";
    return {
      model,
      client: async () => {
        const { OpenAIModelClient } = await import("../providers/openai.js");
        return new OpenAIModelClient({ model, ...common, ...(apiKey && { apiKey }) });
      },
    };
  }
  const apiKey = env.ANTHROPIC_API_KEY;
  if (!apiKey)
    throw new UsageError("ANTHROPIC_API_KEY is not set: export your Anthropic API key in it");
  const model = args.model ?? defaultModel;
  return {
    model,
    client: async () => {
      const { AnthropicModelClient } = await import("../providers/anthropic.js");
      return new AnthropicModelClient({ apiKey, model, ...common });
    },
  };
}
