//! ABS with the undamped utilization controller, eq. (7) of Zhang and Loguinov 2010, which
//! drives a non-bottleneck link's buffer to infinity (the reason for (8)); see `abs.rs`.

use super::abs::{self, AbsParams};
use super::PolicyEntry;
use crate::params::{normalize, VariantDef};

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "abs_u_undamped",
        doc: "ABS with the undamped utilization controller, eq. 7 (diverges on a non-bottleneck link)",
        params: AbsParams::specs,
        keys: AbsParams::KEYS,
        normalize: normalize::<AbsParams>,
    },
    adaptive: true,
    make: |v, _| abs::make(v, true),
};
