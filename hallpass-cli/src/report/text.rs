//! The report as text: a tree drawn with box characters, in colour on a terminal (allowed
//! green, denied red, directories bold), plain when piped.

use hallpass_proto::shown::shown;

use super::tree::{summary, Node};

/// At most this many entries of a directory are shown; the rest are summed up in one line.
const SHOWN: usize = 20;

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.on && !s.is_empty() {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// `12 writes: 10 allowed (...), 2 denied (...)`.
    fn counts(&self, node: &Node) -> String {
        let (head, allowed, denied) = summary(&node.counts);
        let parts: Vec<String> = [self.paint("32", &allowed), self.paint("31", &denied)]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect();
        format!("{head}: {}", parts.join(", "))
    }
}

/// The report; `title` is shown as it is (the caller made it fit).
pub fn render(title: &str, tree: &Node, colour: bool) -> String {
    let st = Style { on: colour };
    let mut out = format!("{}\n", st.paint("1", title));
    if tree.counts.total == 0 {
        out.push_str("no writes outside the project were logged\n");
        return out;
    }
    out.push_str(&format!(
        "{}, {} of them asked about (or would have been)\n",
        st.counts(tree),
        tree.counts.asked
    ));
    let (name, node) = Node::collapse("", tree);
    let name = if name.is_empty() {
        "/".to_string()
    } else {
        shown(&name).to_string()
    };
    out.push_str(&format!(
        "{}  {}\n",
        st.paint("1;34", &name),
        st.counts(node)
    ));
    children(&st, node, "", &mut out);
    out
}

fn children(st: &Style, node: &Node, prefix: &str, out: &mut String) {
    let list = node.sorted();
    let more = list.len().saturating_sub(SHOWN);
    for (i, (name, child)) in list.iter().take(SHOWN).enumerate() {
        let last = i + 1 == list.len().min(SHOWN) && more == 0;
        let (name, child) = Node::collapse(name, child);
        // The command chose the name: an escape sequence or a line break in it would erase
        // or forge the lines of the report.
        let name = shown(&name);
        let drawn = if child.children.is_empty() {
            name.to_string()
        } else {
            st.paint("1;34", &format!("{name}/"))
        };
        let branch = if last { "└── " } else { "├── " };
        out.push_str(&format!("{prefix}{branch}{drawn}  {}\n", st.counts(child)));
        let deeper = format!("{prefix}{}", if last { "    " } else { "│   " });
        children(st, child, &deeper, out);
    }
    if more > 0 {
        let writes: usize = list.iter().skip(SHOWN).map(|(_, c)| c.counts.total).sum();
        out.push_str(&format!("{prefix}└── … {more} more ({writes} writes)\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::entry;
    use super::*;

    #[test]
    fn plain_tree() {
        let t = Node::build(&[
            entry("/home/me/.claude/a", "allow", "audit"),
            entry("/home/me/.claude/b", "allow", "policy"),
            entry("/home/me/x", "deny", "unattended"),
        ]);
        let s = render("T", &t, false);
        let want = "T\n\
            3 writes: 2 allowed (1 audit, 1 policy), 1 denied (1 unattended), 2 of them asked about (or would have been)\n\
            /home/me  3 writes: 2 allowed (1 audit, 1 policy), 1 denied (1 unattended)\n\
            ├── .claude/  2 writes: 2 allowed (1 audit, 1 policy)\n\
            │   ├── a  1 write: 1 allowed (1 audit)\n\
            │   └── b  1 write: 1 allowed (1 policy)\n\
            └── x  1 write: 1 denied (1 unattended)\n";
        assert_eq!(s, want);
        assert!(!s.contains('\x1b'));
        assert!(render("T", &t, true).contains("\x1b[31m1 denied (1 unattended)\x1b[0m"));
    }
}
