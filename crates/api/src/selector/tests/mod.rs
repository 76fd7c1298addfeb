//! Table-driven cases for label and field selectors: what parses (and its canonical form), what
//! fails (and the exact message a user sees), and what matches.

mod field_cases;
mod label_cases;
