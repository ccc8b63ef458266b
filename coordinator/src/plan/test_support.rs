//! The plans the plan's tests build.

use super::build::build;
use super::model::{Plan, PlanError};
use crate::cli::parse;

pub(super) fn plan(args: &[&str]) -> Result<Plan, PlanError> {
    build(&parse(std::iter::once("fleetbench").chain(args.iter().copied())).unwrap())
}

/// The option the plan of `args` refuses as invalid (None for a plan or another error).
pub(super) fn refused_option(args: &[&str]) -> Option<&'static str> {
    match plan(args) {
        Err(PlanError::Invalid { option, .. }) => Some(option),
        _ => None,
    }
}
