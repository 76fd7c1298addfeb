//! What admission knows of the request beyond the object: whether it is a dry run (a webhook
//! with side effects refuses one), and the warnings its steps raise (a policy binding's Warn
//! action), carried in a task-local scope the write handlers open, so steps deep in the write
//! engine reach them without every signature passing them along.

use std::cell::RefCell;
use std::future::Future;

/// One request's admission scope.
struct Scope {
    dry_run: bool,
    warnings: RefCell<Vec<String>>,
}

tokio::task_local! {
    static SCOPE: Scope;
}

/// Run `write` in a scope; its result and the warnings raised in it (each once, in order).
pub(crate) async fn run<T>(dry_run: bool, write: impl Future<Output = T>) -> (T, Vec<String>) {
    let scope = Scope {
        dry_run,
        warnings: RefCell::new(Vec::new()),
    };
    SCOPE
        .scope(scope, async move {
            let out = write.await;
            let warnings = SCOPE.with(|s| s.warnings.take());
            (out, warnings)
        })
        .await
}

/// Run the synchronous `f` in a scope of its own; its result and the warnings raised in it.
pub(crate) fn collect<T>(dry_run: bool, f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let scope = Scope {
        dry_run,
        warnings: RefCell::new(Vec::new()),
    };
    SCOPE.sync_scope(scope, || {
        let out = f();
        (out, SCOPE.with(|s| s.warnings.take()))
    })
}

/// Raise a warning for the client (dropped outside a scope: the server's own writes).
/// A write retried after a conflict raises the same warning again; it is kept once.
pub(crate) fn warn(message: String) {
    let _ = SCOPE.try_with(|s| {
        let mut w = s.warnings.borrow_mut();
        if !w.contains(&message) {
            w.push(message);
        }
    });
}

/// Is the request in this scope a dry run?
pub(crate) fn dry_run() -> bool {
    SCOPE.try_with(|s| s.dry_run).unwrap_or(false)
}
