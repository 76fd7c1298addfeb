//! Table-driven cases for users, tokens, RBAC and the bootstrap policy.

mod bootstrap_cases;
mod rbac_cases;
mod rule_cases;
mod token_cases;
mod user_cases;
