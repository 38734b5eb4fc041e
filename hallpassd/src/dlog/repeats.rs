//! Repeats counted, not repeated: per message (its format string), a window opens with its
//! first line; the first `burst` lines of the window are written, the rest held; when the
//! window ends, the last line held is written with how many were held. Pure: the time is
//! passed in.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One message's window.
struct Window {
    start: Instant,
    written: u32,
    held: u64,
    last: String,
}

/// See the module.
pub struct Repeats {
    burst: u32,
    window: Duration,
    open: HashMap<&'static str, Window>,
}

impl Repeats {
    pub fn new(burst: u32, window: Duration) -> Repeats {
        Repeats {
            burst,
            window,
            open: HashMap::new(),
        }
    }

    /// The line to write now for `text`, a line of message `key`, if any; with the summary of
    /// the key's window before it, if that window ended.
    pub fn offer(&mut self, key: &'static str, text: String, now: Instant) -> Option<String> {
        let ended = self
            .open
            .get(&key)
            .is_some_and(|w| now.duration_since(w.start) >= self.window);
        let summary = match ended {
            true => self.open.remove(&key).and_then(|w| self.summary(w)),
            false => None,
        };
        let w = self.open.entry(key).or_insert(Window {
            start: now,
            written: 0,
            held: 0,
            last: String::new(),
        });
        let line = if w.written < self.burst {
            w.written += 1;
            Some(text)
        } else {
            w.held += 1;
            w.last = text;
            None
        };
        match (summary, line) {
            (Some(s), Some(l)) => Some(format!("{s}\n{l}")),
            (s, l) => s.or(l),
        }
    }

    /// The summaries of the windows that ended by `now`; those windows are closed.
    pub fn due(&mut self, now: Instant) -> Vec<String> {
        let window = self.window;
        let ended: Vec<&'static str> = self
            .open
            .iter()
            .filter(|(_, w)| now.duration_since(w.start) >= window)
            .map(|(k, _)| *k)
            .collect();
        let mut out = Vec::new();
        for k in ended {
            if let Some(s) = self.open.remove(k).and_then(|w| self.summary(w)) {
                out.push(s);
            }
        }
        out
    }

    /// The summaries of every window, ended or not (the daemon exits); all are closed.
    pub fn all(&mut self) -> Vec<String> {
        let open = std::mem::take(&mut self.open);
        open.into_values().filter_map(|w| self.summary(w)).collect()
    }

    /// The line that ends a window that held lines.
    fn summary(&self, w: Window) -> Option<String> {
        match w.held {
            0 => None,
            1 => Some(w.last),
            n => Some(format!(
                "{} [and {} more like it in {} s]",
                w.last,
                n - 1,
                self.window.as_secs()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Duration = Duration::from_secs(10);

    /// Regression (issue 24): a session that connects to the API in a loop wrote 35,782
    /// lines in 3 s. The first few are written, the rest counted in one line.
    #[test]
    fn a_flood_is_counted() {
        let mut r = Repeats::new(3, W);
        let t = Instant::now();
        let out: Vec<String> = (0..35_782)
            .filter_map(|i| r.offer("drop {pid}", format!("drop {i}"), t))
            .collect();
        assert_eq!(out, ["drop 0", "drop 1", "drop 2"]);
        assert!(r.due(t + W / 2).is_empty());
        assert_eq!(
            r.due(t + W),
            ["drop 35781 [and 35778 more like it in 10 s]"]
        );
        // A new window.
        assert_eq!(
            r.offer("drop {pid}", "drop x".into(), t + W),
            Some("drop x".into())
        );
    }

    #[test]
    fn messages_are_counted_apart() {
        let mut r = Repeats::new(1, W);
        let t = Instant::now();
        assert_eq!(r.offer("a", "a1".into(), t), Some("a1".into()));
        assert_eq!(r.offer("b", "b1".into(), t), Some("b1".into()));
        assert_eq!(r.offer("a", "a2".into(), t), None);
        // One held: written as it was.
        assert_eq!(r.due(t + W), ["a2"]);
    }

    /// A line after its window ended brings the summary with it, before it.
    #[test]
    fn a_late_line_ends_the_window() {
        let mut r = Repeats::new(1, W);
        let t = Instant::now();
        r.offer("a", "a1".into(), t);
        r.offer("a", "a2".into(), t);
        r.offer("a", "a3".into(), t);
        assert_eq!(
            r.offer("a", "a4".into(), t + 2 * W),
            Some("a3 [and 1 more like it in 10 s]\na4".into())
        );
    }

    #[test]
    fn everything_held_comes_out_at_the_end() {
        let mut r = Repeats::new(1, W);
        let t = Instant::now();
        r.offer("a", "a1".into(), t);
        r.offer("a", "a2".into(), t);
        assert_eq!(r.all(), ["a2"]);
        assert!(r.due(t + W).is_empty());
    }
}
