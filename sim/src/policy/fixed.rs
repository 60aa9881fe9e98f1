//! `fixed`: the configured buffer (`buffer_pkts` or `buffer_bytes`, the link's own or the flat
//! one), unchanged. The same as no policy; it exists so that one link of a topology can opt out
//! of a flat `buffer_policy`, and so that `buffer_policy=fixed,bdp,...` sweeps as one axis.

use super::{BufferPolicy, LinkContext, PolicyEntry};
use crate::params::{normalize, ConfigError, Param, Value, VariantDef};

crate::params! {
    /// The configured buffer.
    pub struct FixedParams as "Fixed" {}
}

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "fixed",
        doc: "the configured buffer_pkts (or buffer_bytes), unchanged",
        params: FixedParams::specs,
        keys: FixedParams::KEYS,
        normalize: normalize::<FixedParams>,
    },
    adaptive: false,
    make,
};

struct Fixed;

impl BufferPolicy for Fixed {}

fn make(v: &Value, _: &LinkContext) -> Result<Box<dyn BufferPolicy>, ConfigError> {
    FixedParams::parse(v)?;
    Ok(Box::new(Fixed))
}
