//! The OLTP workloads of sysbench 1.0 as an agent runs them: the workers and prepare and
//! cleanup, over the SQL driver layer (`crate::sql`). What a run asks for (options,
//! statement texts, schema) is the model's (`fleetbench_model::workloads::oltp`).

pub mod open;
pub mod prepare;
pub mod worker;
