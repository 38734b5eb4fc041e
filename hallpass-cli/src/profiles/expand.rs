//! A profile entry as written (`~`, `~/x`, `${VAR}`, `${VAR:-default}`) made into a path,
//! from the environment the profile is applied in.

use std::path::{Path, PathBuf};

/// `~`, `~/x`, `${VAR}` and `${VAR:-default}` (nested), from `env`. The result must be
/// absolute.
pub fn expand(
    raw: &str,
    home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, String> {
    let s = vars(raw, env)?;
    let p = if s == "~" {
        home.to_path_buf()
    } else if let Some(rest) = s.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(&s)
    };
    if !p.is_absolute() {
        return Err(format!(
            "is not absolute once expanded (`{s}`): start it with `/`, `~/` or a variable"
        ));
    }
    Ok(p)
}

/// Replaces `${VAR}` and `${VAR:-default}`; an unset or empty VAR takes the default.
fn vars(s: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let body = &rest[i + 2..];
        let end = closing(body).ok_or("has a `${` without its `}`")?;
        let inner = &body[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("names a variable `{var}` that is not one"));
        }
        match (env(var).filter(|v| !v.is_empty()), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(&vars(d, env)?),
            (None, None) => {
                return Err(format!(
                    "uses ${{{var}}}, which is not set (give a default: ${{{var}:-...}})"
                ))
            }
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The index of the `}` that closes a `${` whose body starts `s`.
pub fn closing(s: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}
