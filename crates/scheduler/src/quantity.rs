//! Resource quantities as integers of milli-units: the scheduler uses the parser the agent's
//! resource summaries are made with (`flotilla_apis::quantity`), so both read a quantity alike.

pub use flotilla_apis::quantity::millis;
