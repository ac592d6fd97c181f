import { ProviderError, type ProviderName } from "../../src/providers/provider-error.js";

/** An error event in the middle of a stream, as an adapter throws it. */
export const streamError = (type: string, message: string, provider: ProviderName = "anthropic") =>
  new ProviderError({ provider, kind: "stream", type, providerMessage: message });

/** An HTTP error status, as an adapter throws it once the SDK's retries ran out. */
export const statusError = (
  status: number,
  message: string,
  fields: { type?: string; code?: string; provider?: ProviderName } = {},
) =>
  new ProviderError({
    provider: fields.provider ?? "anthropic",
    kind: "status",
    status,
    type: fields.type,
    code: fields.code,
    providerMessage: message,
  });
