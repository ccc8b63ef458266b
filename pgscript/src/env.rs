//! What evaluating an expression reads: a client's variables, its random numbers and the
//! default seed of the hash and permute functions.

use crate::Random;
use crate::value::Vars;

/// What an evaluation reads: a client's variables, its random numbers and the default
/// seed of the hash and permute functions.
pub struct Env<'a> {
    pub vars: &'a Vars,
    pub rng: &'a mut dyn Random,
    pub default_seed: i64,
}
