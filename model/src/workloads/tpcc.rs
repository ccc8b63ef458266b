//! TPC-C (specification 5.11) as tpcc-mysql runs it: the options of a run or a prepare
//! step, the transaction names and their response-time limits.

use super::server::Target;
use crate::options::{Declared, SpecError};
use crate::options::{Words, declare_options};
use crate::workloads::server::ServerOptions;

/// The tables, in the order tpcc-mysql creates them.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_orders",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// The transaction types, in tpcc-mysql's order (its report numbers them 0..4).
pub const TXN_NAMES: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// The 90th-percentile response-time limits of the specification (clause 5.2.5.7), in
/// seconds, per type: a transaction within its limit counts as `sc`, beyond it as `lt`.
pub const LIMITS_S: [f64; 5] = [5.0, 5.0, 5.0, 80.0, 20.0];

/// The most warehouses a run may name: about 1 TB of data (100 MB each), within the
/// schema's smallint warehouse ids (32,767), and a load plan of a few MB per agent.
pub const MAX_WAREHOUSES: u32 = 10_000;

/// What a Prepare call does with the TPC-C tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrepareStep {
    /// Creates the nine tables (one agent, after every agent's dry run).
    #[default]
    Create,
    /// Loads this agent's warehouses (and the items, on one agent).
    Load,
    /// Secondary indexes and foreign keys, after every agent has loaded.
    Index,
    /// The consistency conditions over this agent's warehouses.
    Check,
}

impl PrepareStep {
    pub const ALL: [PrepareStep; 4] = [
        PrepareStep::Create,
        PrepareStep::Load,
        PrepareStep::Index,
        PrepareStep::Check,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PrepareStep::Create => "create",
            PrepareStep::Load => "load",
            PrepareStep::Index => "index",
            PrepareStep::Check => "check",
        }
    }

    pub fn from_name(s: &str) -> Option<PrepareStep> {
        PrepareStep::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// A TPC-C run's or prepare step's options, as the coordinator plans them and an agent
/// receives them (with its own share of the warehouses).
#[derive(Debug, Clone, PartialEq)]
pub struct TpccConfig {
    pub target: Target,
    /// W, the foreign keys, how warehouses are shared and the waits (declared options).
    pub options: TpccOptions,
    /// This agent's share, first..=last (the coordinator's plan: 1..=W).
    pub first_warehouse: u32,
    pub last_warehouse: u32,
    pub step: PrepareStep,
    /// This agent loads the item table too.
    pub load_items: bool,
    /// The storage engine and the server variables recorded (declared options).
    pub server: ServerOptions,
    /// The load's NURand constant for last names (a run picks its own near it).
    pub c_last_load: u32,
}

impl Default for TpccConfig {
    fn default() -> Self {
        TpccConfig {
            target: Target::default(),
            options: TpccOptions::defaults(),
            first_warehouse: 1,
            last_warehouse: 1,
            step: PrepareStep::Create,
            load_items: true,
            server: ServerOptions::defaults(),
            c_last_load: DEFAULT_C_LAST_LOAD,
        }
    }
}

/// C_LAST of the load when nobody chooses one: any value in 0..=255 will do, the run's is
/// chosen at the distance the specification asks from it.
pub const DEFAULT_C_LAST_LOAD: u32 = 157;

declare_options! {
    /// TPC-C's own options, declared once: the command line (tpcc-mysql's `-w` is
    /// `--warehouses`), `tpcc help`, a Start's option bag and the result document follow.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct TpccOptions {
        /// W: warehouses in the database.
        pub warehouses: u32 = option(
            "warehouses",
            Count,
            "1",
            "Warehouses in the database (W; tpcc-mysql's -w)",
        );
        /// `--foreign-keys`: tpcc-mysql's foreign keys, added after the load.
        pub foreign_keys: bool = option(
            "foreign-keys",
            Flag,
            "on",
            "Add tpcc-mysql's foreign keys after loading",
        );
        /// `--warehouse-split=partition`: home warehouses from the agent's share only.
        pub partition: bool = option(
            "warehouse-split",
            Text,
            "random",
            "Home warehouses random over all W per transaction (random, tpcc-mysql's way) or from each agent's own share (partition)",
        ) => Words(&[("random", false), ("partition", true)], "expected random or partition");
        /// `--keying-think=spec`: the specification's keying and think times.
        pub keying_think: bool = option(
            "keying-think",
            Text,
            "off",
            "off (no waits, as tpcc-mysql) or spec (the specification's keying and think times per terminal)",
        ) => Words(&[("off", false), ("spec", true)], "expected off or spec");
    }
    check = TpccOptions::bounds;
}

impl TpccOptions {
    fn bounds(&self) -> Result<(), SpecError> {
        if self.warehouses == 0 || self.warehouses > MAX_WAREHOUSES {
            return Err(SpecError::Options(format!(
                "invalid value for --warehouses: '{}' (must be 1 to {MAX_WAREHOUSES})",
                self.warehouses
            )));
        }
        Ok(())
    }
}

impl TpccConfig {
    /// A spec of `warehouses` with this agent's share `first..=last`, the rest default.
    pub fn with_share(warehouses: u32, first: u32, last: u32) -> TpccConfig {
        TpccConfig {
            options: TpccOptions {
                warehouses,
                ..TpccOptions::defaults()
            },
            first_warehouse: first,
            last_warehouse: last,
            ..TpccConfig::default()
        }
    }

    /// The bounds both the plan and an agent hold a TPC-C spec to.
    pub fn validate(&self) -> Result<(), String> {
        self.options.check().map_err(|e| e.to_string())?;
        let w = self.options.warehouses;
        if self.first_warehouse == 0
            || self.first_warehouse > self.last_warehouse
            || self.last_warehouse > w
        {
            return Err(format!(
                "warehouse share {}..{} is not within 1..{w}",
                self.first_warehouse, self.last_warehouse
            ));
        }
        self.server.check().map_err(|e| e.to_string())?;
        if self.c_last_load > 255 {
            return Err(format!(
                "C_LAST of the load must be 0..255, not {}",
                self.c_last_load
            ));
        }
        if self.target.port == 0 && self.target.socket.is_none() {
            return Err(format!(
                "target {}: no port and no socket",
                self.target.name
            ));
        }
        Ok(())
    }

    /// The warehouses of this agent's share.
    pub fn share(&self) -> std::ops::RangeInclusive<u32> {
        self.first_warehouse..=self.last_warehouse
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> TpccConfig {
        TpccConfig {
            target: Target {
                name: "default".into(),
                port: 3306,
                ..Target::default()
            },
            ..TpccConfig::with_share(4, 1, 4)
        }
    }

    #[test]
    fn bounds_name_the_option() {
        cfg().validate().unwrap();
        let bad = [
            (
                TpccConfig {
                    options: TpccOptions {
                        warehouses: 0,
                        ..TpccOptions::defaults()
                    },
                    ..cfg()
                },
                "--warehouses",
            ),
            (
                TpccConfig {
                    last_warehouse: 5,
                    ..cfg()
                },
                "share",
            ),
            (
                TpccConfig {
                    first_warehouse: 3,
                    last_warehouse: 2,
                    ..cfg()
                },
                "share",
            ),
            (
                TpccConfig {
                    server: ServerOptions {
                        engine: "x;drop".into(),
                        ..ServerOptions::defaults()
                    },
                    ..cfg()
                },
                "--mysql-storage-engine",
            ),
            (
                TpccConfig {
                    server: ServerOptions {
                        server_vars: vec!["a b".into()],
                        ..ServerOptions::defaults()
                    },
                    ..cfg()
                },
                "--server-vars",
            ),
        ];
        for (c, want) in bad {
            let e = c.validate().unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn steps_have_names() {
        for s in PrepareStep::ALL {
            assert_eq!(PrepareStep::from_name(s.name()), Some(s));
        }
        assert_eq!(PrepareStep::from_name("bogus"), None);
    }
}
