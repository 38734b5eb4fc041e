//! The tree a report shows: the paths of the log's writes by directory, each node with
//! its counts by decision and reason, and the line that sums a node up.

use std::collections::BTreeMap;
use std::path::Component;

use hallpass_proto::shown::shown;

use crate::logfile::Entry;

/// How many writes a node holds, by decision and reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub total: usize,
    pub allowed: usize,
    pub denied: usize,
    /// Writes a person was asked about, or would have been (audit, unattended).
    pub asked: usize,
    /// (decision, reason) → writes.
    pub reasons: BTreeMap<(String, String), usize>,
}

impl Counts {
    fn add(&mut self, e: &Entry) {
        self.total += 1;
        if e.decision == "allow" {
            self.allowed += 1;
        } else {
            self.denied += 1;
        }
        if e.asked() {
            self.asked += 1;
        }
        *self
            .reasons
            .entry((e.decision.clone(), e.reason.clone()))
            .or_default() += 1;
    }

    /// The reasons of one decision: `2 audit, 1 policy`, most first. A reason is shown
    /// through `shown`: a log in the project could have lines the command wrote.
    pub fn reasons_of(&self, decision: &str) -> String {
        let mut r: Vec<(&str, usize)> = self
            .reasons
            .iter()
            .filter(|((d, _), _)| d == decision)
            .map(|((_, r), n)| (r.as_str(), *n))
            .collect();
        r.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        r.iter()
            .map(|(r, n)| format!("{n} {}", shown(r)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A path component: its writes (its own and those below) and what is below. Names are as
/// logged, the command's own: `text.rs` and `html.rs` show each through `shown`.
#[derive(Debug, Default)]
pub struct Node {
    pub counts: Counts,
    /// Writes of this very path.
    pub own: usize,
    pub children: BTreeMap<String, Node>,
}

impl Node {
    /// The tree of every entry's path; unresolved ones under `(unresolved)`.
    pub fn build(entries: &[Entry]) -> Node {
        let mut root = Node::default();
        for e in entries {
            let names: Vec<String> = match e.abs_path() {
                Some(p) => p
                    .components()
                    .filter_map(|c| match c {
                        Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                        _ => None,
                    })
                    .collect(),
                None => vec!["(unresolved)".into(), e.path.clone()],
            };
            let mut node = &mut root;
            node.counts.add(e);
            for n in names {
                node = node.children.entry(n).or_default();
                node.counts.add(e);
            }
            node.own += 1;
        }
        root
    }

    /// The children to show, most writes first, then by name.
    pub fn sorted(&self) -> Vec<(&String, &Node)> {
        let mut v: Vec<_> = self.children.iter().collect();
        v.sort_by(|a, b| b.1.counts.total.cmp(&a.1.counts.total).then(a.0.cmp(b.0)));
        v
    }

    /// A chain of directories with one child each and no writes of their own shown as one
    /// (`home/me/.claude`): the name to show and the node it ends at.
    pub fn collapse<'a>(name: &str, mut node: &'a Node) -> (String, &'a Node) {
        let mut name = name.to_string();
        while node.own == 0 && node.children.len() == 1 {
            let (n, child) = node
                .children
                .iter()
                .next()
                .unwrap_or_else(|| unreachable!());
            name = format!("{name}/{n}");
            node = child;
        }
        (name, node)
    }
}

/// The line that sums a node up: `12 writes: 10 allowed (9 audit, 1 policy), 2 denied (2 unattended)`.
pub fn summary(c: &Counts) -> (String, String, String) {
    let head = format!("{} write{}", c.total, if c.total == 1 { "" } else { "s" });
    let part = |n: usize, word: &str, d: &str| {
        if n == 0 {
            String::new()
        } else {
            format!("{n} {word} ({})", c.reasons_of(d))
        }
    };
    (
        head,
        part(c.allowed, "allowed", "allow"),
        part(c.denied, "denied", "deny"),
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::entry;
    use super::*;

    #[test]
    fn tree_counts() {
        let t = Node::build(&[
            entry("/home/me/.claude/a", "allow", "audit"),
            entry("/home/me/.claude/a", "allow", "audit"),
            entry("/home/me/x", "deny", "unattended"),
            entry("(cannot read)", "deny", "unresolved"),
        ]);
        assert_eq!(t.counts.total, 4);
        let home = &t.children["home"].children["me"];
        assert_eq!(
            (home.counts.allowed, home.counts.denied, home.counts.asked),
            (2, 1, 3)
        );
        assert_eq!(home.children[".claude"].children["a"].own, 2);
        let (name, end) = Node::collapse("home", &t.children["home"]);
        assert_eq!((name.as_str(), end.children.len()), ("home/me", 2));
        assert_eq!(summary(&home.counts).1, "2 allowed (2 audit)");
        assert!(t.children.contains_key("(unresolved)"));
    }
}
