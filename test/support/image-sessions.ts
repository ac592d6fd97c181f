import { Session } from "../../src/session/session.js";
import type { Message } from "../../src/types.js";
import { png } from "./images.js";

/** The red 3x2 PNG the session tests keep, and its placeholder. */
export const red = png(3, 2);
export const redHolder = `[image: image/png, 3x2, ${red.length} B]`;

/** A prompt with that image, as a front end makes it: the text carries its placeholder. */
export const redPrompt: Message = {
  role: "user",
  content: `what is this?\n${redHolder}`,
  parts: [
    { type: "text", text: "what is this?" },
    { type: "image", mediaType: "image/png", data: red.toString("base64") },
  ],
};

/**
 * `messages` written as session `s1` in `dir` (which may already hold a spoiled blob store),
 * closed; the notes of images not kept go to `notes`. Returns the session file's path.
 */
export async function writeSession(
  dir: string,
  messages: Message[],
  options: { env?: NodeJS.ProcessEnv; blobCap?: number; notes?: string[] } = {},
): Promise<string> {
  const { notes } = options;
  const session = await Session.create({
    dir,
    workspace: "/ws",
    model: "m",
    id: "s1",
    env: options.env ?? {},
    now: new Date(0),
    ...(options.blobCap !== undefined && { blobCap: options.blobCap }),
    ...(notes && { onImageNotKept: (note: string) => notes.push(note) }),
  });
  for (const message of messages) await session.append(message);
  await session.close();
  return session.path;
}
