/**
 * The commented `config.yaml` that `demiurge init` writes: every key of the host's `HostConfig`, each with
 * its default. Only `provider.name` is set; everything else is a comment until uncommented. Unknown keys
 * are refused when the host (or `demiurge doctor`/`status`) reads the file.
 */
export const CONFIG_TEMPLATE = `# Demiurge configuration (written by "demiurge init").
# Every key is optional; a commented key shows its default (uncomment a whole section to change it). Unknown keys are refused, so a typo is an
# error, not a silent default. DEMIURGE_PROVIDER, DEMIURGE_MODEL, DEMIURGE_CORE and DEMIURGE_WORKSPACE
# override the file, and command-line flags override both.

provider:
  # fake (scripted, offline: the default) or openai (any OpenAI-compatible Chat Completions endpoint)
  name: fake
  # model: gpt-4o-mini
  # base_url: http://127.0.0.1:11434/v1
  # The environment variable that holds the API key (default OPENAI_API_KEY); keys never live in this file.
  # api_key_env: OPENAI_API_KEY
  # A fake provider script (YAML or JSON list of steps), relative to this home.
  # fake_script: scripts/demo.yaml
  # timeout_ms: 60000
  # max_retries: 2
  # The model's context window in tokens; default: by model name (docs/compaction.md lists them).
  # context_window: 128000

# The Agent Core directory (agent.yaml, pipelines.yaml, ...); default: the bundled agent/.
# core: /path/to/agent

# The root of the file and shell tools; default: the current directory.
# workspace: /path/to/workspace

# store:
#   # sqlite: <home>/runtime/runtime.sqlite3. For PostgreSQL (several hosts on one database):
#   #   kind: postgres
#   #   url: postgres://user:password@host:5432/database
#   # DEMIURGE_STORE_URL=postgres://... wins over this section.
#   kind: sqlite
#   # SQLite only. FULL fsyncs every commit; NORMAL can lose the last commits on power loss.
#   synchronous: FULL

# leases:
#   # How long a host owns a run, and a claimed work item, without a heartbeat.
#   run_ms: 30000
#   work_ms: 30000

# plan_mode:
#   # What a mutating tool does in plan mode: deny, or ask for an approval.
#   on_write: deny

# compaction:
#   # Before a model round whose estimated request passes threshold x the context window, the messages older
#   # than the last keep_messages are summarized by the model (docs/compaction.md).
#   enabled: true
#   threshold: 0.8
#   keep_messages: 4

# delivery:
#   poll_ms: 250
#   webhook:
#     url: https://example.com/demiurge/deliveries
#     timeout_ms: 10000

# scheduler:
#   enabled: true
#   tick_ms: 1000

# tasks:
#   # How long a cancelled task's process gets between SIGTERM and SIGKILL.
#   grace_ms: 2000

# shutdown:
#   # How long "serve" may take to close on SIGINT/SIGTERM; past it, it names what it still waits for and exits 1.
#   deadline_ms: 10000

# http:
#   # "serve" also serves the web dashboard and its API here (as with --http); loopback unless you name another address.
#   addr: 127.0.0.1:7780
`;
