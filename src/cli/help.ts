/** What `mini-agent --help` prints: the commands, every flag, the environment and the exit codes. */
export const usage = `Usage: mini-agent [options] ["task"]
       mini-agent rules [list | add allow|deny|allow-unsandboxed "WORDS" | remove N | explain "COMMAND" | explain --stdin]
       mini-agent export [ID] [--format html|md] [-o FILE] [--force]
       mini-agent rewind [ID] --to N [--files-only | --conversation-only] [--dry-run]
       mini-agent skills         list the skills found here, with warnings
       mini-agent mcp list | trust NAME | untrust NAME   the MCP servers and their tools
       mini-agent config [path]  every setting in effect and where it came from; path: your file
       mini-agent trust [--revoke]  trust this project's config, .mcp.json servers and skills
       mini-agent acp            an Agent Client Protocol agent on stdio, for an editor
       mini-agent batch TASKS.jsonl --out DIR [-- AGENT FLAGS]   many tasks at once (batch --help)

Runs one task in the current folder and prints the answer; with no task on a terminal,
starts an interactive session (/exit or Ctrl-D to leave). After --, every word is the task's,
never an option or a command: mini-agent -- "$TASK".
Where the sandbox works, bash runs in it without asking: the workspace is writable,
nothing else, no network; --mode ask to be asked.

Options:
  -p, --print TASK          run TASK once (same as giving it as an argument)
      --cwd DIR             work in DIR instead of the current folder
      --provider NAME       anthropic (default), openai-responses (OpenAI's Responses API,
                            for OpenAI's models) or openai (OpenAI, Ollama, vLLM, llama.cpp,
                            OpenRouter: any Chat Completions server)
  -m, --model NAME          model (default: $MINI_AGENT_MODEL, else claude-sonnet-5-5 for
                            anthropic; required for openai and openai-responses)
      --base-url URL        provider endpoint (default: $ANTHROPIC_BASE_URL or $OPENAI_BASE_URL,
                            else the provider's public API)
      --allow-bash          let the agent run shell commands without asking (deny rules still
                            hold); never a command that asks to leave the sandbox
      --mode MODE           code (default: the rules as they are), ask (ask before every
                            change) or plan (read only; changes denied); /mode switches
      --allow "WORDS"       allow commands that start with WORDS, e.g. --allow "npm test" (repeatable)
      --deny "WORDS"        deny commands that start with WORDS, also behind known wrappers
                            (repeatable; wins; a guard, not a boundary: see docs/rules.md)
      --allow-unsandboxed "WORDS"
                            let the agent run commands that start with WORDS outside the
                            sandbox when it asks to (outside_sandbox), without asking you
      --skill NAME          put skill NAME's text before the task (repeatable; see docs/skills.md)
      --image FILE          attach an image (PNG, JPEG, GIF, WebP) to the task (repeatable)
      --mcp-config FILE     also start the MCP servers FILE names (repeatable; yours: no
                            trust asked; wins a name clash; see docs/mcp.md)
      --no-mcp              read and start no MCP server
      --sandbox MODE        where bash runs: auto (default: bubblewrap when available),
                            required (never outside the sandbox) or off
      --sandbox-hide PATH   also hide PATH inside the sandbox (repeatable)
      --sandbox-processes N processes a sandboxed command may run (default 4096)
      --sandbox-memory SIZE writable memory per sandboxed process, e.g. 16G (default 8G)
      --sandbox-file-size SIZE
                            largest file a sandboxed process may write (default 4G)
  -c, --continue            resume the newest session for this folder
  -r, --resume [ID]         resume the session ID (or a unique prefix); no ID: choose one
      --sessions [--all]    list this folder's sessions (--all: every folder's) and exit
      --output-format FMT   text (default), json (one object at the end) or stream-json
                            (one event per line; the schema ships in the package)
      --input-format FMT    text (default) or stream-json: user messages and approval
                            answers as JSON lines on stdin (needs --output-format stream-json)
      --approval-timeout S  with --input-format stream-json or acp, deny a call whose
                            approval request has no answer after S seconds (default 300;
                            S above 0, at most 2147483: almost 25 days)
      --end-with-stdin      with a task: when stdin closes, exit as on a second SIGTERM, ending this
                            process's group (for a parent that starts it in a group of its own)
      --token-budget N      stop before a model request once the tokens used (input plus
                            output) and the previous request's would pass N (exit 5)
      --max-retries N       run a round lost to a rate limit, an overload or a dropped
                            stream again at most N times (default 3), each told; the
                            provider's SDK then retries nothing unseen (0 to 10)
      --max-turns N         stop after N model rounds (default 50)
      --context-window N    the model's context window in tokens; the conversation is
                            compacted before it fills (default 200000 for Claude models)
      --thinking LEVEL      how much the model thinks first: off, low, medium, high, xhigh
                            or max, where the API takes them (default: the model's own)
      --hide-thinking       do not show the model's thinking on the terminal
      --debug               show stack traces for errors

Export (the newest session of this folder, or ID, as one self-contained file):
      --format FMT          html (default; the format of -o FILE.md is md) or md
  -o, --output FILE         where to write it (- for stdout; default: exports/ID.html in
                            the state folder for html, never the workspace; stdout for md)
      --force               replace FILE if it exists

Rewind (the newest session of this folder, or ID: the files the agent changed and the
conversation, the later prompts kept in the session file as a branch):
      --to N                back to just before the user's prompt N (1 for the first)
      --files-only          put back the files only; the conversation goes on as it was
      --conversation-only   take the conversation back only; the files stay as they are
      --dry-run             say what would be done; change nothing

Rules explain (what a run with these flags would decide, and the part that decided):
      --stdin               explain one command a line from stdin, or a JSON object
                            {"command", "cwd", "mode", "sandbox": "bwrap"|"off", "rules"};
                            one JSON line out for each (see docs/rules.md)

Trust:
      --revoke              with trust: forget every approval of this project
  -v, --version             print the version
  -h, --help                print this help

Environment:
  ANTHROPIC_API_KEY         key for --provider anthropic (required)
  ANTHROPIC_BASE_URL        Messages API endpoint, e.g. a local Anthropic-compatible server
  OPENAI_API_KEY            key for --provider openai and openai-responses (optional for a
                            local server)
  OPENAI_BASE_URL           their endpoint, e.g. http://127.0.0.1:11434/v1 (Ollama)
  MINI_AGENT_MODEL          model when -m is not given
  MINI_AGENT_HOME           state folder: sessions (default ~/.mini-agent)
  MINI_AGENT_SEARCH         grep and find: rg (ripgrep required), js (never ripgrep);
                            unset: ripgrep when it is on PATH

Exit codes: 0 done, 1 error, 2 usage or configuration, 3 turn limit reached,
4 compaction failed, 5 token budget reached, 130 interrupted (Ctrl-C), 143 SIGTERM, 129 SIGHUP, 141 stdout closed.`;
