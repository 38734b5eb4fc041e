//! `hallpass rules`: the lasting rules, through the daemon (which owns the file).

use std::path::Path;

use hallpass_proto::shown::shown;
use hallpass_proto::{
    rule, AddRuleRequest, ListRulesReply, ListRulesRequest, RemoveRuleRequest, Rule,
};

use crate::api::{client, runtime, say};
use crate::error::{ExitCode, Failure};
use crate::flags::{RulesAction, RulesArgs};
use crate::pathargs;

pub fn rules(args: RulesArgs) -> Result<ExitCode, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::new(format!("cannot read the current directory: {e}")))?;
    let home = crate::env::home_dir();
    let abs = |p: &Path| cwd.join(crate::env::expand_tilde(p, &home));
    // A rule for the whole home, or one with a `*` taken for a pattern, is a mistake to say.
    match &args.action {
        Some(RulesAction::Allow { path }) => {
            pathargs::allow("rules allow", path, &abs(path), &home)?
        }
        Some(RulesAction::Deny { path }) => pathargs::deny("rules deny", path, &abs(path), &home)?,
        _ => {}
    }
    let abs = |p: &Path| abs(p).to_string_lossy().into_owned();
    let reply = ask(args.action, abs).map_err(|f| crate::inside::client_failed("rules", f))?;
    print(&reply, args.json);
    // A broken file is worth a non-zero status even when listing.
    Ok(if reply.error.is_empty() {
        ExitCode::Success
    } else {
        ExitCode::Problems
    })
}

/// Sends the request for `action` to the daemon; its reply is the rules now.
fn ask(
    action: Option<RulesAction>,
    abs: impl Fn(&Path) -> String,
) -> Result<ListRulesReply, Failure> {
    // The daemon reads and writes the file; start it if it is not running.
    drop(crate::daemon::connect()?);
    runtime()?.block_on(async {
        let mut c = client().await?;
        let r = match action.unwrap_or(RulesAction::List) {
            RulesAction::List => c.list_rules(ListRulesRequest {}).await,
            RulesAction::Allow { path } => c.add_rule(add(rule::Action::Allow, abs(&path))).await,
            RulesAction::Deny { path } => c.add_rule(add(rule::Action::Deny, abs(&path))).await,
            RulesAction::Remove { path } => {
                c.remove_rule(RemoveRuleRequest { path: abs(&path) }).await
            }
        };
        r.map(|r| r.into_inner()).map_err(failed)
    })
}

/// A refusal of the daemon, with the exit code it ends with: no rule to remove is nothing to
/// do, not hallpass failing.
fn failed(e: tonic::Status) -> Failure {
    let (code, hint) = match e.code() {
        tonic::Code::NotFound => (ExitCode::Nothing, "\nhint: `hallpass rules` lists them"),
        tonic::Code::InvalidArgument => (ExitCode::Usage, ""),
        _ => (ExitCode::Failed, ""),
    };
    Failure::with_code(format!("rules: {}{hint}", say(&e)), code)
}

fn add(action: rule::Action, path: String) -> AddRuleRequest {
    AddRuleRequest {
        rule: Some(Rule {
            action: action as i32,
            path,
        }),
    }
}

fn word(action: i32) -> &'static str {
    match rule::Action::try_from(action) {
        Ok(rule::Action::Allow) => "allow",
        Ok(rule::Action::Deny) => "deny",
        _ => "?",
    }
}

/// `hallpass rules --json`.
#[derive(serde::Serialize)]
struct RulesJson<'a> {
    /// Why the rules file could not be read; empty when it is fine.
    error: &'a str,
    file: &'a str,
    rules: Vec<RuleJson<'a>>,
}

#[derive(serde::Serialize)]
struct RuleJson<'a> {
    /// `allow` or `deny`.
    action: &'static str,
    path: &'a str,
}

fn print(r: &ListRulesReply, json: bool) {
    if json {
        crate::out::json(&RulesJson {
            error: &r.error,
            file: &r.file,
            rules: r
                .rules
                .iter()
                .map(|x| RuleJson {
                    action: word(x.action),
                    path: &x.path,
                })
                .collect(),
        });
        return;
    }
    if !r.error.is_empty() {
        eprintln!("hallpass: {}", r.error);
    }
    if r.rules.is_empty() {
        crate::out::line(format_args!("no rules ({})", shown(&r.file)));
        return;
    }
    crate::out::line(format_args!("# {}", shown(&r.file)));
    // A rule saved by an answer names a path the command chose.
    for x in &r.rules {
        crate::out::line(format_args!("{} {}", word(x.action), shown(&x.path)));
    }
}
