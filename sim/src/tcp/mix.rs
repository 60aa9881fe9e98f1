//! Variant mixes (`tcp_mix`): each route's long flows split into groups with their own TCP.
//! Details: docs/tcp.md, `tcp/mix.rs`.

use super::{TcpCommon, TcpConfig, TCP};
use crate::params::{ConfigError, Param, Tagged, Value};

/// One group of a mix: its name as written, and its flow count.
#[derive(Clone, Debug, PartialEq)]
pub struct MixGroup {
    pub name: String,
    pub flows: i64,
}

/// Splits a mix string into groups; the message names what is wrong.
pub fn parse(mix: &str) -> Result<Vec<MixGroup>, String> {
    let groups: Vec<&str> =
        mix.split(|c: char| c == ',' || c == '+' || c.is_whitespace()).filter(|g| !g.is_empty()).collect();
    if groups.is_empty() {
        return Err("is empty; write groups as name:count, e.g. \"reno:10,highspeed:10\"".into());
    }
    groups
        .iter()
        .map(|g| {
            let (name, count) = g.split_once(':').ok_or_else(|| format!("group {g:?} must be name:count"))?;
            let flows: i64 =
                count.parse().map_err(|_| format!("group {g:?}: the count must be an integer, got {count:?}"))?;
            if flows < 0 {
                return Err(format!("group {g:?}: the count must be >= 0"));
            }
            Ok(MixGroup { name: name.to_string(), flows })
        })
        .collect()
}

impl TcpConfig {
    /// The TCP of the mix group `name`, built on this (the `tcp` section's) config.
    pub fn group(&self, name: &str) -> Result<TcpConfig, ConfigError> {
        let named = TcpConfig::parse(&Value::str(name))?;
        let mut common = self.0.common.clone();
        common.recovery.clone_from(&named.0.common.recovery);
        common.release.clone_from(&named.0.common.release);
        // A preset's other settings come with it (the `linux` sender's initial window, delayed ACKs).
        if let Some(preset) = TCP.presets.iter().find(|p| p.name == name) {
            let Value::Map(mut fields) = common.value() else { unreachable!("a record is a mapping") };
            for (key, setting) in preset.set.iter().filter(|(k, _)| *k != TCP.tag) {
                if let Some(f) = fields.iter_mut().find(|f| f.0 == *key) {
                    f.1 = setting.value();
                }
            }
            common = TcpCommon::parse(&Value::Map(fields))?;
        }
        let same_law = named.0.variant == self.0.variant;
        let params = if same_law { self.0.params.clone() } else { named.0.params.clone() };
        Ok(TcpConfig(Tagged { variant: named.0.variant, common, params, label: named.0.label }))
    }
}

/// Checks a mix against the config: known names, counts adding up to `flows_per_route`.
pub fn check(mix: &str, tcp: &TcpConfig, flows_per_route: i64) -> Result<Vec<(MixGroup, TcpConfig)>, String> {
    let groups = parse(mix)?;
    let total: i64 = groups.iter().map(|g| g.flows).sum();
    if total != flows_per_route {
        return Err(format!("counts add up to {total}, but flows is {flows_per_route}"));
    }
    groups
        .into_iter()
        .map(|g| {
            let t = tcp.group(&g.name).map_err(|e| format!("group {:?}: {}", g.name, e.message))?;
            Ok((g, t))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_separators_and_names_errors() {
        let g = parse("reno:10, newreno:5+sack:1").unwrap();
        assert_eq!(
            g.iter().map(|g| (g.name.as_str(), g.flows)).collect::<Vec<_>>(),
            vec![("reno", 10), ("newreno", 5), ("sack", 1)]
        );
        assert!(parse("reno").unwrap_err().contains("name:count"));
        assert!(parse("reno:x").unwrap_err().contains("integer"));
        let tcp = TcpConfig::named("reno");
        assert_eq!(check("reno:3,newreno:3", &tcp, 5).unwrap_err(), "counts add up to 6, but flows is 5");
        assert!(check("reno:3,vegas:2", &tcp, 5).unwrap_err().starts_with("group \"vegas\": unknown tcp"));
    }

    #[test]
    fn a_group_keeps_the_common_settings() {
        let v = Value::map(vec![
            ("cc", Value::str("newreno")),
            ("recovery", Value::str("reno")),
            ("min_rto_ms", Value::Float(1000.0)),
        ]);
        let tcp = TcpConfig::parse(&v).unwrap();
        let g = tcp.group("sack").unwrap();
        assert_eq!((g.0.label, g.common().recovery.as_str(), g.common().min_rto_ms), ("sack", "sack", 1000.0));
    }
}
