//! Progress on stderr: a bar per phase on a terminal, and one line per phase either way (so
//! logs of non-interactive runs still say where the time went).

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Reports the phases of one target's run.
#[derive(Clone)]
pub struct Progress {
    prefix: String,
    tty: bool,
}

/// One phase in progress; count work with [`Phase::bar`], end with [`Phase::done`].
pub struct Phase {
    bar: ProgressBar,
    line: String,
    started: Instant,
}

impl Progress {
    /// Progress for the target named `label`.
    pub fn new(label: &str) -> Progress {
        Progress {
            prefix: format!("[{label}]"),
            tty: std::io::stderr().is_terminal(),
        }
    }

    /// A one-off message.
    pub fn note(&self, msg: &str) {
        eprintln!("{} {msg}", self.prefix);
    }

    /// Start a phase of `total` steps.
    pub fn phase(&self, name: &str, total: u64) -> Phase {
        let line = format!("{} {name}", self.prefix);
        let bar = if self.tty {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_prefix(line.clone());
            bar
        } else {
            eprintln!("{line}…");
            ProgressBar::hidden()
        };
        Phase {
            bar,
            line,
            started: Instant::now(),
        }
    }
}

impl Phase {
    /// The bar, to count work from other tasks (cloning is cheap).
    pub fn bar(&self) -> &ProgressBar {
        &self.bar
    }

    /// End the phase with a one-line result.
    pub fn done(self, result: &str) {
        self.bar.finish_and_clear();
        eprintln!(
            "{}: {result} ({:.1} s)",
            self.line,
            self.started.elapsed().as_secs_f64()
        );
    }
}
