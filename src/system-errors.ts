/** The words for the codes of failed system calls that reach the user. */
const systemErrors: Record<string, string> = {
  ENOSPC: "no space left on device",
  ENOENT: "no such file or directory",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ENOTDIR: "a part of the path is not a folder",
  EEXIST: "a file is in the way",
  EISDIR: "a folder is in the way",
  EIO: "input/output error",
  EPIPE: "the reader went away",
  ENXIO: "no such device or address",
  ELOOP: "too many links in the path",
  ENAMETOOLONG: "the name is too long",
};

/** What a person can do when a file of mini-agent's state folder cannot be written, by code. */
const stateHints: Record<string, string> = {
  ENOSPC: "free space, or set MINI_AGENT_HOME to another folder",
  EDQUOT: "free space, or set MINI_AGENT_HOME to another folder",
  EROFS: "set MINI_AGENT_HOME to a folder you can write",
  EACCES: "make it writable, or set MINI_AGENT_HOME to a folder you can write",
  EPERM: "make it writable, or set MINI_AGENT_HOME to a folder you can write",
  ENOTDIR: "set MINI_AGENT_HOME to a folder you can write",
};

/**
 * What to do about a failed call on a file of the state folder (the session, its blobs, its
 * lock), for the codes that have an answer: `free space, or set MINI_AGENT_HOME to another folder`.
 */
export function stateHint(code: string): string | undefined {
  return stateHints[code];
}

/** What a failed system call's code means, in words: `no space left on device`. */
export function systemErrorMeaning(code: string): string {
  return systemErrors[code] ?? code;
}
