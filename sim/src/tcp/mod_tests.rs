//! Tests of the `tcp` section: presets, names and their parsing (`tcp/mod.rs`).

use super::*;
use crate::params::Param;

#[test]
fn cubic_is_todays_and_old_names_say_what_replaced_them() {
    let t = TcpConfig::named("cubic");
    assert_eq!((t.0.variant, t.common().recovery.as_str(), t.0.label), ("cubic_rfc9438", "rack_tlp", "cubic"));
    assert_eq!(TcpConfig::named("cubic_2622").0.variant, "cubic_2622");
    let e = TcpConfig::parse(&Value::str("linux")).unwrap_err().to_string();
    assert!(e.contains("tcp \"linux\" was renamed: use cubic ("), "{e}");
    let e = TcpConfig::parse(&Value::map(vec![("cc", Value::str("cubic"))])).unwrap_err().to_string();
    assert!(e.starts_with("cc: tcp \"cubic\" was renamed: use cubic_rfc9438"), "{e}");
}

#[test]
fn presets_expand_to_the_three_choices_and_label_back() {
    for (name, recovery, release) in [
        ("reno", "reno", "window"),
        ("newreno", "newreno", "window"),
        ("paced", "newreno", "paced"),
        ("poisson", "newreno", "poisson"),
    ] {
        let t = TcpConfig::named(name);
        assert_eq!(
            (t.0.variant, t.common().recovery.as_str(), t.common().release.as_str()),
            ("newreno", recovery, release)
        );
        assert_eq!(t.0.label, name);
        assert_eq!(TcpConfig::parse(&t.value()).unwrap(), t, "{name} round-trips");
    }
}

#[test]
fn every_law_has_at_most_max_modes() {
    for e in LAWS {
        assert!(e.modes.len() <= sender_core::MAX_MODES, "{}", e.def.name);
    }
}

#[test]
fn a_mapping_picks_each_choice() {
    let v = Value::map(vec![("cc", Value::str("newreno")), ("release", Value::str("paced"))]);
    let t = TcpConfig::parse(&v).unwrap();
    assert_eq!(t.0.label, "paced");
    let e = TcpConfig::parse(&Value::map(vec![("cc", Value::str("vegas"))])).unwrap_err();
    assert_eq!(e.field, "cc");
    let e = TcpConfig::parse(&Value::map(vec![("recovery", Value::str("rack"))])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "recovery: unknown value \"rack\"; allowed: reno, newreno, sack, sack_retain, linux, prr, rack_tlp"
    );
    let e = TcpConfig::parse(&Value::str("vegas")).unwrap_err();
    assert!(e.message.starts_with("unknown tcp \"vegas\"; allowed: reno, newreno, sack, "), "{e}");
    let e = TcpConfig::parse(&Value::map(vec![("beta", Value::Float(0.5))])).unwrap_err();
    assert!(e.message.starts_with("unknown key for tcp newreno"), "{e}");
}
