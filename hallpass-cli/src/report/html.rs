//! The report as one self-contained HTML page: the same tree, each directory a `<details>`
//! element (collapsible without script), the top levels open. No external resources.

use hallpass_proto::shown::shown;

use super::tree::{summary, Node};

const STYLE: &str = "body{font:14px/1.5 system-ui,sans-serif;margin:2em;color:#222}\
ul{list-style:none;padding-left:1.4em;margin:0}summary{cursor:pointer}\
.name{font-family:ui-monospace,monospace;font-weight:600;unicode-bidi:isolate}\
.file{font-family:ui-monospace,monospace;unicode-bidi:isolate}\
.n{color:#555;margin-left:.6em}.allow{color:#1a7f37;margin-left:.6em}.deny{color:#cf222e;margin-left:.6em}";

/// Levels open at first.
const OPEN: usize = 3;

/// `s` as HTML text: markup characters as entities.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn counts(node: &Node) -> String {
    let (head, allowed, denied) = summary(&node.counts);
    let mut s = format!("<span class=\"n\">{}</span>", escape(&head));
    if !allowed.is_empty() {
        s.push_str(&format!(
            "<span class=\"allow\">{}</span>",
            escape(&allowed)
        ));
    }
    if !denied.is_empty() {
        s.push_str(&format!("<span class=\"deny\">{}</span>", escape(&denied)));
    }
    s
}

pub fn page(title: &str, tree: &Node) -> String {
    let mut body = String::new();
    if tree.counts.total == 0 {
        body.push_str("<p>No writes outside the project were logged.</p>\n");
    } else {
        body.push_str(&format!(
            "<p>{}; {} asked about (or would have been).</p>\n<ul class=\"tree\">\n",
            counts(tree),
            tree.counts.asked
        ));
        let (name, node) = Node::collapse("", tree);
        item(
            if name.is_empty() { "/" } else { &name },
            node,
            0,
            &mut body,
        );
        body.push_str("</ul>\n");
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n{body}</body>\n</html>\n",
        t = escape(title)
    )
}

/// One entry; `name` is the command's, shown through `shown` and then escaped for HTML.
fn item(name: &str, node: &Node, depth: usize, out: &mut String) {
    let name = escape(&shown(name).to_string());
    if node.children.is_empty() {
        out.push_str(&format!(
            "<li><span class=\"file\">{name}</span>{}</li>\n",
            counts(node)
        ));
        return;
    }
    let open = if depth < OPEN { " open" } else { "" };
    out.push_str(&format!(
        "<li><details{open}><summary><span class=\"name\">{name}/</span>{}</summary>\n<ul>\n",
        counts(node)
    ));
    for (n, child) in node.sorted() {
        let (n, child) = Node::collapse(n, child);
        item(&n, child, depth + 1, out);
    }
    out.push_str("</ul>\n</details></li>\n");
}
