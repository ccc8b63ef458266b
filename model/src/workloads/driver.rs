//! Which database a target is: the one type both the target's options and the TLS
//! settings name (its own file, so that neither imports the other for it).

/// Which database a target is and so which client speaks to it (`--db-driver`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Driver {
    /// MySQL and MariaDB (and proxies speaking their protocol).
    #[default]
    Mysql,
    /// PostgreSQL.
    Pgsql,
}

impl Driver {
    pub fn parse(s: &str) -> Option<Driver> {
        match s {
            "mysql" => Some(Driver::Mysql),
            "pgsql" => Some(Driver::Pgsql),
            _ => None,
        }
    }

    /// sysbench's name of the driver (`drv:name()`, `--db-driver`).
    pub fn name(self) -> &'static str {
        match self {
            Driver::Mysql => "mysql",
            Driver::Pgsql => "pgsql",
        }
    }
}
