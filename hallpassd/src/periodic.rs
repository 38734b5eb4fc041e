//! Background chores: a thread that calls a method every so often, for as long as its object
//! lives.

use std::sync::Arc;
use std::time::Duration;

/// Calls `chore(&obj)` every `every` on a thread named `name`, until `obj` is dropped.
pub fn every<T: Send + Sync + 'static>(name: &str, obj: &Arc<T>, every: Duration, chore: fn(&T)) {
    let weak = Arc::downgrade(obj);
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || loop {
            std::thread::sleep(every);
            match weak.upgrade() {
                Some(o) => chore(&o),
                None => return,
            }
        })
        .unwrap_or_else(|e| panic!("spawning the {name} thread: {e}"));
}
