import type { Compaction } from "../compaction/record.js";
import { Session } from "../session/session.js";
import type { Message } from "../types.js";
import { visible } from "../visible.js";
import { imageNotKeptLine, missingImagesLine } from "./notices.js";

/**
 * A session file opened to go on from (`--continue`, `--resume`, an editor's `session/load`), and
 * what its loading found told in one line each: calls left without a result (a crash), images
 * whose bytes are gone, a file change or a rewind cut off. The CLI and the editor front end both
 * open a session this way, so each tells the same things.
 */
export async function openToContinue(path: string, tell: (line: string) => void) {
  const loaded = await Session.open(path, {
    onImageNotKept: (note) => tell(imageNotKeptLine(note)),
  });
  const { session, messages, compaction, imagesRefused, openRewind } = loaded;
  if (loaded.missingImages) tell(missingImagesLine(loaded.missingImages, path));
  if (loaded.repaired > 0) {
    tell(
      `mini-agent: ${loaded.repaired} tool call(s) had no result; recorded as outcome unknown\n`,
    );
  }
  for (const { tool, path: file, toolCallId } of loaded.cutOff ?? []) {
    tell(
      `mini-agent: ${visible(`${tool} ${file}`)} (call ${visible(toolCallId)}) was cut off after its file's bytes were kept: whether it changed the file is unknown (mini-agent rewind --to N --files-only --dry-run shows it)\n`,
    );
  }
  if (openRewind) {
    const only = openRewind.conversation ? "" : " --files-only";
    tell(
      `mini-agent: a rewind of this session to just before prompt ${openRewind.to} was cut off: some files may not be put back; \`mini-agent rewind ${session.id} --to ${openRewind.to}${only}\` finishes it\n`,
    );
  }
  return {
    session,
    imagesRefused,
    cutBy: loaded.cutBy,
    messages: messages as Message[],
    compaction: compaction as Compaction | undefined,
  };
}
