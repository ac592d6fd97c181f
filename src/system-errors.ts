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

/** What a failed system call's code means, in words: `no space left on device`. */
export function systemErrorMeaning(code: string): string {
  return systemErrors[code] ?? code;
}
