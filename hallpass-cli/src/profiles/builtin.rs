//! The built-in profiles: where each coding agent and package manager keeps its own state,
//! caches and logs, as its own documentation (or, where that says nothing, its source) says.
//! Each entry cites where it comes from. `${VAR:-default}` follows the variable the tool
//! itself reads to move the directory.
//!
//! The rule (`rule_tests.rs` keeps it): no profile allows a place that decides what runs
//! later, in or out of hallpass. Directories of programs (`~/.cargo/bin`, `~/go/bin`, npm's
//! global prefix, `~/.local/bin`, an agent's native install), shell and login files
//! (`~/.bashrc`, `~/.npmrc`), and what an agent runs or obeys on its own: settings with hooks
//! and MCP servers, commands, skills and their scripts, subagents, plugins and extensions,
//! instruction files, permission and trust records. So an agent's directory is not allowed
//! whole: its state is, name by name (a new name the tool starts writing is asked about until
//! the profile follows), and where a state directory holds such a place, an ask entry keeps it
//! out (`~/.gemini/tmp/bin`). A file an agent saves through a lock and a temporary name is
//! allowed with those names (`~/.claude.json.lock`, `~/.claude.json.tmp.*`).

/// A built-in profile: its name (the command's basename it applies to), what it is, the
/// paths it allows and those it asks about although it allows around them.
pub struct Builtin {
    pub name: &'static str,
    pub about: &'static str,
    pub allow: &'static [&'static str],
    pub ask: &'static [&'static str],
}

pub const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "claude",
        about: "Claude Code: its sessions, history, caches and logs",
        allow: &[
            // code.claude.com/docs/en/claude-directory ("application data": what Claude
            // Code writes in ~/.claude as it works; CLAUDE_CONFIG_DIR moves it): transcripts,
            // tool results and per-project memory in projects/, checkpoints in
            // file-history/, prompt history, plans, to-do and task lists, debug logs.
            // Left out, asked: settings.json and settings.local.json (hooks run commands,
            // code.claude.com/docs/en/hooks), CLAUDE.md and rules/ (instructions,
            // docs/en/memory), commands/, skills/, agents/, output-styles/, plugins/
            // (docs/en/plugins), hooks scripts kept anywhere in it, ide/ (written by the
            // editor), local/ (an npm install of Claude Code itself).
            "${CLAUDE_CONFIG_DIR:-~/.claude}/projects",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/file-history",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/history.jsonl",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/history.jsonl.lock",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/plans",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/todos",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/tasks",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/debug",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/paste-cache",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/cache",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/statsig",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/telemetry",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/stats-cache.json",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/stats-cache.json.lock",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/stats-cache.json.tmp.*",
            // The running sessions' own files, made and removed by each session:
            // docs/en/claude-directory, "shell-snapshots/: captured shell environment used by
            // the Bash tool. Removed on clean exit" (one per session, sourced by that
            // session's commands only: github.com/anthropics/claude-code/issues/57450).
            "${CLAUDE_CONFIG_DIR:-~/.claude}/shell-snapshots",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/session-env",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/sessions",
            // The OAuth login on Linux, refreshed while it runs
            // (code.claude.com/docs/en/authentication#credential-management).
            "${CLAUDE_CONFIG_DIR:-~/.claude}/.credentials.json",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/.credentials.json.lock",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/.credentials.json.tmp.*",
            // code.claude.com/docs/en/settings: ~/.claude.json holds preferences, the OAuth
            // session, MCP servers and per-project state ($CLAUDE_CONFIG_DIR/.claude.json
            // when set); saved at every start through ~/.claude.json.lock and
            // ~/.claude.json.tmp.PID.RANDOM, and copied into backups/. Allowed although it
            // names MCP servers Claude Code starts: docs/limitations.md says so.
            "${CLAUDE_CONFIG_DIR:-~}/.claude.json",
            "${CLAUDE_CONFIG_DIR:-~}/.claude.json.lock",
            "${CLAUDE_CONFIG_DIR:-~}/.claude.json.tmp.*",
            "${CLAUDE_CONFIG_DIR:-~/.claude}/backups",
            // Not ~/.local/share/claude nor ~/.local/bin/claude: the native install's
            // versions and the program that runs them (code.claude.com/docs/en/setup).
        ],
        ask: &[],
    },
    Builtin {
        name: "codex",
        about: "OpenAI Codex CLI: its sessions, history, logs and login",
        allow: &[
            // developers.openai.com/codex/config-advanced: CODEX_HOME (default ~/.codex)
            // holds Codex's local state: session rollouts in sessions/ and
            // archived_sessions/, history.jsonl, logs in log/, the login in auth.json
            // (written in place: codex-rs/core/src/auth/storage.rs); the update check's
            // version.json, the model list's cache, and the state and log databases
            // (state_N.sqlite, logs_N.sqlite and their -wal and -shm files) from its source.
            // Left out, asked: config.toml and NAME.config.toml (MCP servers, the `notify`
            // program: developers.openai.com/codex/config-reference), AGENTS.md and
            // AGENTS.override.md (developers.openai.com/codex/guides/agents-md), skills/ with
            // their scripts/ (developers.openai.com/codex/skills; codex-rs/core/src/skills/
            // system.rs rewrites skills/.system at start), rules/ (commands run outside the
            // sandbox without asking: developers.openai.com/codex/exec-policy), prompts/,
            // hooks.json and hooks/, agents/, plugins/, .tmp/ (its clone of the curated
            // plugins), and any script kept there (a `notify` program often is).
            "${CODEX_HOME:-~/.codex}/sessions",
            "${CODEX_HOME:-~/.codex}/archived_sessions",
            "${CODEX_HOME:-~/.codex}/history.jsonl",
            "${CODEX_HOME:-~/.codex}/log",
            "${CODEX_HOME:-~/.codex}/auth.json",
            "${CODEX_HOME:-~/.codex}/version.json",
            "${CODEX_HOME:-~/.codex}/models_cache.json",
            "${CODEX_HOME:-~/.codex}/state_*.sqlite*",
            "${CODEX_HOME:-~/.codex}/logs_*.sqlite*",
            // github.com/openai/codex/pull/3179: a snapshot of the shell per session, sourced
            // by that session's commands and removed with it.
            "${CODEX_HOME:-~/.codex}/shell_snapshots",
        ],
        ask: &[],
    },
    Builtin {
        name: "copilot",
        about: "GitHub Copilot CLI: its session state, logs and internal state",
        allow: &[
            // docs.github.com/en/copilot/reference/copilot-cli-reference/cli-config-dir-reference
            // ("By default, this directory is ~/.copilot"; COPILOT_HOME relocates it):
            // session-state/ (history-session-state/ before it), logs/, session-store.db,
            // config.json ("automatically managed application state"), the command history.
            // Left out, asked: settings.json, mcp-config.json and lsp-config.json (servers
            // it starts), permissions-config.json (saved tool permissions),
            // copilot-instructions.md and instructions/, agents/, skills/, hooks/,
            // installed-plugins/ and plugin-data/, ide/, pkg/ (its own updates).
            "${COPILOT_HOME:-~/.copilot}/session-state",
            "${COPILOT_HOME:-~/.copilot}/history-session-state",
            "${COPILOT_HOME:-~/.copilot}/logs",
            "${COPILOT_HOME:-~/.copilot}/session-store.db*",
            "${COPILOT_HOME:-~/.copilot}/config.json",
            "${COPILOT_HOME:-~/.copilot}/command-history-state.json",
        ],
        ask: &[],
    },
    Builtin {
        name: "gemini",
        about: "Gemini CLI: its chats, logs, checkpoints, project registry and login",
        allow: &[
            // github.com/google-gemini/gemini-cli packages/core/src/config/storage.ts
            // (GEMINI_CLI_HOME replaces the home directory: packages/core/src/utils/paths.ts):
            // tmp/ holds each project's chats, logs, checkpoints and shell history.
            "${GEMINI_CLI_HOME:-~}/.gemini/tmp",
            // projects.json names each project's directory in tmp/ and history/, saved
            // through .tmp and locked with proper-lockfile's .lock
            // (packages/core/src/config/projectRegistry.ts), which makes those directories
            // and a .project_root marker in each at the first start in a project (and loops
            // on the next name if it cannot). What else is in history/PROJECT/ is asked
            // about (below).
            "${GEMINI_CLI_HOME:-~}/.gemini/projects.json",
            "${GEMINI_CLI_HOME:-~}/.gemini/projects.json.tmp",
            "${GEMINI_CLI_HOME:-~}/.gemini/projects.json.lock",
            "${GEMINI_CLI_HOME:-~}/.gemini/history",
            "${GEMINI_CLI_HOME:-~}/.gemini/history/*/.project_root",
            // Logins and ids (storage.ts: oauth_creds.json, google_accounts.json,
            // mcp-oauth-tokens.json, installation_id).
            "${GEMINI_CLI_HOME:-~}/.gemini/oauth_creds.json",
            "${GEMINI_CLI_HOME:-~}/.gemini/google_accounts.json",
            "${GEMINI_CLI_HOME:-~}/.gemini/mcp-oauth-tokens.json",
            "${GEMINI_CLI_HOME:-~}/.gemini/installation_id",
            // Left out, asked: settings.json (MCP servers, hooks:
            // geminicli.com/docs/reference/configuration), .env, GEMINI.md and memory.md,
            // trustedFolders.json (which projects' own settings load), commands/, skills/,
            // agents/, policies/ and policy_integrity.json, extensions/, acknowledgments/.
        ],
        ask: &[
            // storage.ts getGlobalBinDir: tmp/bin, where it downloads ripgrep and runs it.
            "${GEMINI_CLI_HOME:-~}/.gemini/tmp/bin",
            // The checkpoints' shadow git repositories: history/PROJECT/.git, with
            // .gitconfig there as git's global configuration
            // (packages/core/src/services/gitService.ts); hooks and git configuration run
            // programs (core.fsmonitor, core.hooksPath).
            "${GEMINI_CLI_HOME:-~}/.gemini/history/*/*",
        ],
    },
    Builtin {
        name: "aider",
        about: "aider: its caches, analytics choice and install record",
        allow: &[
            // aider.chat/HISTORY.html (v0.43.0): "New $HOME/.aider/caches dir for app-wide
            // expendable caches"; aider.chat/docs/more/analytics.html keeps the opt-in
            // choice in ~/.aider/analytics.json; aider/main.py its installs.json.
            // Left out, asked: ~/.aider/oauth-keys.env, which aider loads as a .env file
            // (aider.chat/docs/config/dotenv.html: every option is an AIDER_ variable, the
            // lint and test commands too), and ~/.aider.conf.yml.
            "~/.aider/caches",
            "~/.aider/analytics.json",
            "~/.aider/installs.json",
        ],
        ask: &[],
    },
    Builtin {
        name: "npm",
        about: "npm: its package cache and logs",
        allow: &[
            // docs.npmjs.com/cli/v10/configuring-npm/folders#cache: "Cache files are stored
            // in ~/.npm on Posix"; the `cache` config (npm_config_cache) moves it; the
            // content-addressed cache is _cacache/, the logs _logs/
            // (docs.npmjs.com/cli/v10/using-npm/logging).
            // Left out, asked: _npx/, where `npx` and `npm exec` install the packages they
            // run (docs.npmjs.com/cli/v10/commands/npm-exec), and ~/.npmrc.
            "${npm_config_cache:-~/.npm}/_cacache",
            "${npm_config_cache:-~/.npm}/_logs",
            "${npm_config_cache:-~/.npm}/_update-notifier-last-checked",
        ],
        ask: &[],
    },
    Builtin {
        name: "pip",
        about: "pip: its HTTP and wheel cache",
        allow: &[
            // pip.pypa.io/en/stable/topics/caching/#default-paths: Linux
            // "~/.cache/pip (and it respects the XDG_CACHE_HOME directory)"; PIP_CACHE_DIR
            // moves it (pip.pypa.io/en/stable/cli/pip/#cmdoption-cache-dir).
            "${PIP_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/pip}",
        ],
        ask: &[],
    },
    Builtin {
        name: "cargo",
        about: "cargo: the registry and git caches and their locks",
        allow: &[
            // doc.rust-lang.org/cargo/guide/cargo-home.html: registry/ (index, cache, src)
            // and git/ (db, checkouts) are caches, under CARGO_HOME (default ~/.cargo).
            // Left out: bin/, config.toml and env (sourced by shell start-up files).
            "${CARGO_HOME:-~/.cargo}/registry",
            "${CARGO_HOME:-~/.cargo}/git",
            // doc.rust-lang.org/cargo/reference/unstable.html#gc: the cache tracker's
            // database, $CARGO_HOME/.global-cache (written by every cargo since 1.78).
            "${CARGO_HOME:-~/.cargo}/.global-cache",
            // The lock cargo takes on those caches (cargo's src/cargo/util/cache_lock.rs:
            // $CARGO_HOME/.package-cache and .package-cache-mutate).
            "${CARGO_HOME:-~/.cargo}/.package-cache",
            "${CARGO_HOME:-~/.cargo}/.package-cache-mutate",
        ],
        ask: &[],
    },
    Builtin {
        name: "go",
        about: "go: the module cache, checksum database cache and build cache",
        allow: &[
            // go.dev/ref/mod#module-cache: "The default location of the module cache is
            // $GOPATH/pkg/mod", set with GOMODCACHE; GOPATH defaults to ~/go
            // (pkg.go.dev/cmd/go#hdr-GOPATH_environment_variable).
            "${GOMODCACHE:-${GOPATH:-~/go}/pkg/mod}",
            // go.dev/ref/mod#checksum-database: checksum database data is cached in
            // $GOPATH/pkg/sumdb.
            "${GOPATH:-~/go}/pkg/sumdb",
            // pkg.go.dev/cmd/go#hdr-Build_and_test_caching: "a subdirectory named go-build in
            // the standard user cache directory", or GOCACHE.
            "${GOCACHE:-${XDG_CACHE_HOME:-~/.cache}/go-build}",
            // Left out: GOBIN (~/go/bin), and the `go env -w` file (os.UserConfigDir/go/env).
        ],
        ask: &[
            // go.dev/doc/toolchain#download: a Go toolchain the go command switches to is
            // downloaded as the module golang.org/toolchain into the module cache and run
            // from there.
            "${GOMODCACHE:-${GOPATH:-~/go}/pkg/mod}/golang.org/toolchain@*",
        ],
    },
];
