//! Test helpers shared by the end-to-end suites.
