//! The PriorityLevelConfiguration half of the validation (`ValidatePriorityLevelConfigurationSpec`
//! and its limited, exempt and queuing parts).

use serde_json::Value;

use super::{given, int, text, Check};

/// The most queues a priority level may have.
const MAX_QUEUES: i64 = 10_000_000;

/// Shuffle sharding hashes with 60 bits of entropy at most.
const MAX_HASH_BITS: f64 = 60.0;

impl Check {
    pub(super) fn priority_level(&mut self, name: &str, spec: &Value) {
        let kind = text(spec, "type");
        if (name == "exempt") != (kind == "Exempt") {
            self.invalid(
                "spec.type",
                &Value::from(kind),
                "type must be 'Exempt' if and only if name is 'exempt'",
            );
        }
        match kind {
            "Exempt" => {
                if given(spec, "limited").is_some() {
                    self.forbidden("spec.limited", "must be nil if the type is not Limited");
                }
                if let Some(e) = given(spec, "exempt") {
                    self.shares_and_lending("spec.exempt", e);
                }
            }
            "Limited" => {
                if given(spec, "exempt").is_some() {
                    self.forbidden("spec.exempt", "must be nil if the type is Limited");
                }
                match given(spec, "limited") {
                    None => self.required("spec.limited", "must not be empty when type is Limited"),
                    Some(l) => self.limited(l),
                }
            }
            _ => self.not_supported("spec.type", &Value::from(kind), &["Exempt", "Limited"]),
        }
    }

    fn shares_and_lending(&mut self, path: &str, v: &Value) {
        if let Some(s) =
            given(v, "nominalConcurrencyShares").filter(|s| s.as_i64().unwrap_or(0) < 0)
        {
            self.invalid(
                &format!("{path}.nominalConcurrencyShares"),
                s,
                "must be a non-negative integer",
            );
        }
        if let Some(l) =
            given(v, "lendablePercent").filter(|l| !(0..=100).contains(&l.as_i64().unwrap_or(0)))
        {
            self.invalid(
                &format!("{path}.lendablePercent"),
                l,
                "must be between 0 and 100, inclusive",
            );
        }
    }

    fn limited(&mut self, l: &Value) {
        self.shares_and_lending("spec.limited", l);
        if let Some(b) = given(l, "borrowingLimitPercent").filter(|b| b.as_i64().unwrap_or(0) < 0) {
            self.invalid(
                "spec.limited.borrowingLimitPercent",
                b,
                "if specified, must be a non-negative integer",
            );
        }
        let response = l.get("limitResponse").unwrap_or(&Value::Null);
        let p = "spec.limited.limitResponse";
        match text(response, "type") {
            "Reject" => {
                if given(response, "queuing").is_some() {
                    self.forbidden(
                        &format!("{p}.queuing"),
                        "must be nil if limited.limitResponse.type is not Limited",
                    );
                }
            }
            "Queue" => match given(response, "queuing") {
                None => self.required(
                    &format!("{p}.queuing"),
                    "must not be empty if limited.limitResponse.type is Limited",
                ),
                Some(q) => self.queuing(&format!("{p}.queuing"), q),
            },
            other => self.not_supported(
                &format!("{p}.type"),
                &Value::from(other),
                &["Queue", "Reject"],
            ),
        }
    }

    fn queuing(&mut self, path: &str, q: &Value) {
        let (queues, hand, limit) = (
            int(q, "queues"),
            int(q, "handSize"),
            int(q, "queueLengthLimit"),
        );
        if limit <= 0 {
            self.invalid(
                &format!("{path}.queueLengthLimit"),
                &Value::from(limit),
                "must be positive",
            );
        }
        if queues <= 0 {
            self.invalid(
                &format!("{path}.queues"),
                &Value::from(queues),
                "must be positive",
            );
        } else if queues > MAX_QUEUES {
            self.invalid(
                &format!("{path}.queues"),
                &Value::from(queues),
                &format!("must not be greater than {MAX_QUEUES}"),
            );
        }
        let hp = format!("{path}.handSize");
        if hand <= 0 {
            self.invalid(&hp, &Value::from(hand), "must be positive");
        } else if hand > queues {
            self.invalid(
                &hp,
                &Value::from(hand),
                &format!("should not be greater than queues ({queues})"),
            );
        } else if (hand as f64) * (queues as f64).log2() > MAX_HASH_BITS {
            self.invalid(&hp, &Value::from(hand), &format!("required entropy bits of deckSize {queues} and handSize {hand} should not be greater than 60"));
        }
    }
}
