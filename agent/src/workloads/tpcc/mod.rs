//! TPC-C (specification 5.11) as tpcc-mysql runs it, on an agent: the schema, the initial
//! data, the five transactions, the consistency check and the table jobs. The options of a
//! run or a prepare step are the model's (`fleetbench_model::workloads::tpcc`).

pub mod check;
pub mod r#gen;
pub mod job;
pub mod load;
pub mod run;
pub mod schema;
pub mod txn;
