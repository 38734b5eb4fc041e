//! The built-in profiles: where each coding agent and package manager keeps its own state,
//! caches and config, as its own documentation says. Each entry cites the page it comes
//! from. `${VAR:-default}` follows the variable the tool itself reads to move the directory.
//!
//! Left out on purpose: directories of executables (`~/.cargo/bin`, `~/go/bin`, npm's global
//! prefix, `~/.local/bin`) and shell or login files (`~/.npmrc`, `~/.bashrc`): a write there
//! changes what runs next, and deserves a question.

/// A built-in profile: its name (the command's basename it applies to), what it is, and the
/// paths it allows.
pub struct Builtin {
    pub name: &'static str,
    pub about: &'static str,
    pub allow: &'static [&'static str],
    pub ask: &'static [&'static str],
}

pub const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "claude",
        about: "Claude Code: settings, sessions and its native install",
        allow: &[
            // code.claude.com/docs/en/settings: user settings in ~/.claude/settings.json;
            // CLAUDE_CONFIG_DIR moves the directory (docs/en/settings#environment-variables).
            "${CLAUDE_CONFIG_DIR:-~/.claude}",
            // code.claude.com/docs/en/settings: "~/.claude.json" holds preferences, OAuth
            // session, MCP server configs and per-project state.
            "~/.claude.json",
            // code.claude.com/docs/en/setup#uninstall-claude-code: the native install keeps
            // its versions in ~/.local/share/claude and updates them itself.
            "~/.local/share/claude",
        ],
        ask: &[],
    },
    Builtin {
        name: "codex",
        about: "OpenAI Codex CLI: config, auth, sessions and logs",
        allow: &[
            // developers.openai.com/codex/config-basic: user config in ~/.codex/config.toml;
            // developers.openai.com/codex/config-advanced: CODEX_HOME moves it (sessions/,
            // log/, auth.json live there too).
            "${CODEX_HOME:-~/.codex}",
        ],
        ask: &[],
    },
    Builtin {
        name: "copilot",
        about: "GitHub Copilot CLI: config, session state and logs",
        allow: &[
            // docs.github.com/en/copilot/reference/copilot-cli-reference/cli-config-dir-reference:
            // "By default, this directory is ~/.copilot"; COPILOT_HOME relocates it.
            "${COPILOT_HOME:-~/.copilot}",
        ],
        ask: &[],
    },
    Builtin {
        name: "gemini",
        about: "Gemini CLI: settings, trusted folders, history and checkpoints",
        allow: &[
            // geminicli.com/docs/reference/configuration: user settings in
            // ~/.gemini/settings.json; trustedFolders.json and tmp/ are kept beside it.
            "~/.gemini",
        ],
        ask: &[],
    },
    Builtin {
        name: "aider",
        about: "aider: its caches and analytics settings",
        allow: &[
            // aider.chat/HISTORY.html (v0.43.0): "New $HOME/.aider/caches dir for app-wide
            // expendable caches"; aider.chat/docs/more/analytics.html keeps the opt-in
            // choice in ~/.aider/analytics.json.
            "~/.aider",
        ],
        ask: &[],
    },
    Builtin {
        name: "npm",
        about: "npm: its package cache and logs",
        allow: &[
            // docs.npmjs.com/cli/v10/configuring-npm/folders#cache: "Cache files are stored
            // in ~/.npm on Posix"; the `cache` config (npm_config_cache) moves it, and
            // _logs/ lives there too (docs.npmjs.com/cli/v10/using-npm/logging).
            "${npm_config_cache:-~/.npm}",
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
        ],
        ask: &[],
    },
];
