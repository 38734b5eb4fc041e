//! The built-in profiles' rule: none allows a place that decides what runs later (a directory
//! of programs, a shell or login file, an agent's hooks, commands, skills, plugins, MCP
//! servers or instructions), with or without hallpass; and a file an agent saves through a
//! lock and a temporary name is allowed with those names. Each place is decided as the
//! daemon decides it (`hallpass_proto::pattern`: the deeper entry, allow or ask, wins).

use std::path::Path;

use hallpass_proto::pattern::{allow_wins, Pattern};

use super::{expand, BUILTIN};

const HOME: &str = "/home/me";

/// Places that decide what runs, by anyone: programs, shell and session start-up, tools'
/// configuration that names programs. `~` is [`HOME`].
const ANYONE: &[&str] = &[
    "~/.local/bin/x",
    "~/bin/x",
    "~/.cargo/bin/x",
    "~/.cargo/env",
    "~/.cargo/config.toml",
    "~/go/bin/x",
    "~/.npm-global/bin/x",
    "~/.npmrc",
    "~/.local/lib/python3.12/site-packages/x.pth",
    "~/.local/share/applications/x.desktop",
    "~/.config/autostart/x.desktop",
    "~/.config/systemd/user/x.service",
    "~/.config/environment.d/x.conf",
    "~/.config/fish/config.fish",
    "~/.config/git/config",
    "~/.config/go/env",
    "~/.config/pip/pip.conf",
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.pam_environment",
    "~/.xprofile",
    "~/.xsessionrc",
    "~/.gitconfig",
    "~/.git-templates/hooks/pre-commit",
    "~/.ssh/config",
    "~/.ssh/authorized_keys",
    "~/.env",
    "~/.agents/skills/x/SKILL.md",
];

/// Each agent's own such places (cited in `builtin.rs`).
const AGENTS: &[&str] = &[
    // Claude Code: settings (hooks, statusLine), instructions, commands, skills, subagents,
    // plugins, a hook script kept in its directory, its native install and an npm one.
    "~/.claude/settings.json",
    "~/.claude/settings.local.json",
    "~/.claude/CLAUDE.md",
    "~/.claude/rules/x.md",
    "~/.claude/commands/x.md",
    "~/.claude/skills/x/SKILL.md",
    "~/.claude/skills/x/scripts/run.sh",
    "~/.claude/agents/x.md",
    "~/.claude/output-styles/x.md",
    "~/.claude/hooks/x.sh",
    "~/.claude/statusline.sh",
    "~/.claude/plugins/cache/x/hooks/hooks.json",
    "~/.claude/plugins/marketplaces/x/plugin.json",
    "~/.claude/local/claude",
    "~/.claude/downloads/claude",
    "~/.claude/ide/1234.lock",
    "~/.local/share/claude/versions/2.0.0",
    "~/.local/bin/claude",
    "~/.cache/claude/staging/claude",
    // Codex: configuration (MCP servers, notify), instructions, skills and their scripts,
    // approval rules, prompts, hooks, subagents, plugins.
    "~/.codex/config.toml",
    "~/.codex/work.config.toml",
    "~/.codex/AGENTS.md",
    "~/.codex/AGENTS.override.md",
    "~/.codex/skills/.system/x/scripts/x.py",
    "~/.codex/skills/x/SKILL.md",
    "~/.codex/rules/default.rules",
    "~/.codex/prompts/x.md",
    "~/.codex/hooks.json",
    "~/.codex/hooks/x.sh",
    "~/.codex/agents/x.toml",
    "~/.codex/plugins/cache/x",
    "~/.codex/.tmp/plugins/plugins/x/.mcp.json",
    "~/.codex/notify.py",
    // Copilot CLI.
    "~/.copilot/settings.json",
    "~/.copilot/mcp-config.json",
    "~/.copilot/lsp-config.json",
    "~/.copilot/permissions-config.json",
    "~/.copilot/copilot-instructions.md",
    "~/.copilot/instructions/x.instructions.md",
    "~/.copilot/agents/x.md",
    "~/.copilot/skills/x/SKILL.md",
    "~/.copilot/hooks/x.json",
    "~/.copilot/installed-plugins/x",
    "~/.copilot/plugin-data/x",
    "~/.copilot/pkg/universal/1.0.0/index.js",
    // Gemini CLI: settings (MCP servers, hooks), its .env, instructions, trust, commands,
    // skills, subagents, policies, extensions, the ripgrep it downloads, the checkpoints'
    // git repositories.
    "~/.gemini/settings.json",
    "~/.gemini/.env",
    "~/.gemini/GEMINI.md",
    "~/.gemini/memory.md",
    "~/.gemini/trustedFolders.json",
    "~/.gemini/commands/x.toml",
    "~/.gemini/skills/x/SKILL.md",
    "~/.gemini/agents/x.md",
    "~/.gemini/policies/auto-saved.toml",
    "~/.gemini/policy_integrity.json",
    "~/.gemini/extensions/x/gemini-extension.json",
    "~/.gemini/acknowledgments/agents.json",
    "~/.gemini/tmp/bin",
    "~/.gemini/tmp/bin/rg",
    "~/.gemini/history/proj/.git/hooks/pre-commit",
    "~/.gemini/history/proj/.git/config",
    "~/.gemini/history/proj/.gitconfig",
    "~/.gemini/history/proj/git/config",
    // aider: its .env of options (lint and test commands) and its configuration.
    "~/.aider/oauth-keys.env",
    "~/.aider.conf.yml",
    "~/.aider.model.settings.yml",
    // npm's npx installs, Go's downloaded toolchains.
    "~/.npm/_npx/0123abcd/node_modules/.bin/x",
    "~/go/pkg/mod/golang.org/toolchain@v0.0.1-go1.23.0.linux-amd64/bin/go",
    "~/go/pkg/mod/golang.org/toolchain@v0.0.1-go1.23.0.linux-amd64.partial",
];

/// Whether the profile allows a write of `path`, as the daemon decides it.
fn allows(allow: &[Pattern], ask: &[Pattern], path: &Path) -> bool {
    let deepest = |set: &[Pattern]| set.iter().filter_map(|p| p.covers(path)).max();
    allow_wins(deepest(allow), deepest(ask))
}

fn patterns(raw: &[&str]) -> Vec<Pattern> {
    let home = Path::new(HOME);
    raw.iter()
        .map(|r| {
            let p = expand(r, home, &|_| None).unwrap();
            Pattern::parse(&p.to_string_lossy()).unwrap()
        })
        .collect()
}

fn at_home(p: &str) -> std::path::PathBuf {
    Path::new(HOME).join(p.strip_prefix("~/").unwrap())
}

#[test]
fn no_builtin_profile_allows_what_decides_what_runs() {
    for b in BUILTIN {
        let (allow, ask) = (patterns(b.allow), patterns(b.ask));
        for place in ANYONE.iter().chain(AGENTS) {
            assert!(
                !allows(&allow, &ask, &at_home(place)),
                "the profile {} allows {place}",
                b.name
            );
        }
    }
}

/// Writes each agent makes at every start, with the names it saves them through.
#[test]
fn agents_keep_their_state_and_its_lock_and_temporary_names() {
    let state: &[(&str, &[&str])] = &[
        (
            "claude",
            &[
                "~/.claude.json",
                "~/.claude.json.lock",
                "~/.claude.json.tmp.4242.a1b2c3",
                "~/.claude/projects/-home-me-proj/1234.jsonl",
                "~/.claude/projects/-home-me-proj/memory/MEMORY.md",
                "~/.claude/history.jsonl",
                "~/.claude/shell-snapshots/snapshot-bash-1-x.sh",
                "~/.claude/todos/x.json",
            ],
        ),
        (
            "codex",
            &[
                "~/.codex/sessions/2026/01/01/rollout-x.jsonl",
                "~/.codex/history.jsonl",
                "~/.codex/log/codex-tui.log",
                "~/.codex/auth.json",
                "~/.codex/state_5.sqlite-wal",
            ],
        ),
        (
            "gemini",
            &[
                "~/.gemini/tmp/proj/chats/session.json",
                "~/.gemini/tmp/proj/.project_root",
                "~/.gemini/history/proj",
                "~/.gemini/history/proj/.project_root",
                "~/.gemini/projects.json",
                "~/.gemini/projects.json.tmp",
                "~/.gemini/projects.json.lock",
            ],
        ),
        ("copilot", &["~/.copilot/session-state/x/events.jsonl"]),
        (
            "npm",
            &["~/.npm/_cacache/index-v5/00/x", "~/.npm/_logs/x.log"],
        ),
        (
            "go",
            &[
                "~/go/pkg/mod/golang.org/x/sys@v0.1.0/unix/x.go",
                "~/.cache/go-build/00/x",
            ],
        ),
    ];
    for (name, paths) in state {
        let b = BUILTIN.iter().find(|b| b.name == *name).unwrap();
        let (allow, ask) = (patterns(b.allow), patterns(b.ask));
        for p in *paths {
            assert!(
                allows(&allow, &ask, &at_home(p)),
                "{name} does not allow {p}"
            );
        }
    }
}
