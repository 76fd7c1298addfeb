//! One voter's opinion of one endpoint: consecutive results flip it after the thresholds.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// What a voter thinks of one endpoint, and the runs of results behind it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Opinion {
    /// Up or down; `None` before the first probe.
    pub up: Option<bool>,
    /// Since when the opinion holds.
    pub since: Option<Time>,
    /// The last failure, for people.
    pub message: Option<String>,
    successes: u32,
    failures: u32,
}

impl Opinion {
    /// Takes one probe's result. The first result sets the opinion; later, it turns down after
    /// `failure_threshold` failures in a row and up after `success_threshold` successes in a row.
    /// Returns whether the opinion changed.
    pub fn observe(
        &mut self,
        result: Result<(), String>,
        failure_threshold: u32,
        success_threshold: u32,
        now: Time,
    ) -> bool {
        let ok = result.is_ok();
        if ok {
            self.successes += 1;
            self.failures = 0;
        } else {
            self.failures += 1;
            self.successes = 0;
        }
        if let Err(message) = result {
            self.message = Some(message);
        }
        let turn = match self.up {
            None => Some(ok),
            Some(true) if self.failures >= failure_threshold.max(1) => Some(false),
            Some(false) if self.successes >= success_threshold.max(1) => Some(true),
            _ => None,
        };
        match turn {
            Some(up) if self.up != Some(up) => {
                self.up = Some(up);
                self.since = Some(now);
                if up {
                    self.message = None;
                }
                true
            }
            _ => false,
        }
    }
}
