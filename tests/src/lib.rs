//! Helpers for the end-to-end tests: start agent processes, run the coordinator.
