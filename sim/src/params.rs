//! Typed parameters, declared once by `params!`: name, type, default, unit, check and doc,
//! from which parsing, errors and the Python schema follow.
//! Details: docs/engine.md, `params.rs`.

use std::fmt;

/// A configuration value as it arrives from Python or a test: a small JSON-like tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    /// Keys in insertion order.
    Map(Vec<(String, Value)>),
}

impl Value {
    pub fn map(entries: Vec<(&str, Value)>) -> Value {
        Value::Map(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    pub fn str(s: &str) -> Value {
        Value::Str(s.to_string())
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A short rendering for error messages.
    pub fn describe(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => format!("{f:?}"),
            Value::Str(s) => format!("{s:?}"),
            Value::List(l) => format!("a list of {}", l.len()),
            Value::Map(_) => "a mapping".into(),
        }
    }
}

/// A config error: the dotted path of the offending key and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(message: impl Into<String>) -> Self {
        Self { field: String::new(), message: message.into() }
    }

    pub fn at(field: &str, message: impl Into<String>) -> Self {
        Self { field: field.to_string(), message: message.into() }
    }

    /// The same error one level up: `key` is prefixed to the path.
    pub fn under(mut self, key: &str) -> Self {
        self.field = if self.field.is_empty() { key.to_string() } else { format!("{key}.{}", self.field) };
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// A parameter's type, as exported to Python.
#[derive(Clone, Debug)]
pub enum TypeDesc {
    Bool,
    Int,
    Float,
    Str,
    Optional(Box<TypeDesc>),
    List(Box<TypeDesc>),
    /// A list that may also be given as one value (`OneOrList`).
    OneOrList(Box<TypeDesc>),
    /// A record (a `params!` struct): its fields, by name.
    Record {
        name: &'static str,
        doc: String,
        fields: Vec<ParamSpec>,
    },
    /// A tagged union (see `UnionDef`).
    Union(UnionDesc),
}

/// (name, doc, parameters) of a variant.
pub type VariantSpec = (&'static str, &'static str, Vec<ParamSpec>);
/// (name, doc, settings) of a named preset.
pub type PresetSpec = (&'static str, &'static str, Vec<(&'static str, Setting)>);

#[derive(Clone, Debug)]
pub struct UnionDesc {
    pub name: &'static str,
    pub tag: &'static str,
    pub default_tag: &'static str,
    pub common: Vec<ParamSpec>,
    /// (name, doc, parameters) of each registered variant.
    pub variants: Vec<VariantSpec>,
    /// (name, doc, settings) of each named preset.
    pub presets: Vec<PresetSpec>,
    /// (old name, what to use instead) of names no longer in use.
    pub renamed: Vec<(&'static str, &'static str)>,
}

/// One declared parameter.
#[derive(Clone, Debug)]
pub struct ParamSpec {
    pub key: &'static str,
    pub ty: TypeDesc,
    pub default: Value,
    pub unit: &'static str,
    pub doc: String,
    /// What values are allowed, in words ("> 0", "an integer in [0, 100]"); empty = any of the type.
    pub allowed: String,
}

/// A Rust type a parameter can have.
pub trait Param: Sized {
    fn desc() -> TypeDesc;
    fn parse(v: &Value) -> Result<Self, ConfigError>;
    fn value(&self) -> Value;
}

fn wrong(v: &Value, what: &str) -> ConfigError {
    ConfigError::new(format!("must be {what}, got {}", v.describe()))
}

impl Param for bool {
    fn desc() -> TypeDesc {
        TypeDesc::Bool
    }
    fn parse(v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::Bool(b) => Ok(*b),
            _ => Err(wrong(v, "true or false")),
        }
    }
    fn value(&self) -> Value {
        Value::Bool(*self)
    }
}

impl Param for i64 {
    fn desc() -> TypeDesc {
        TypeDesc::Int
    }
    fn parse(v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::Int(i) => Ok(*i),
            _ => Err(wrong(v, "an integer")),
        }
    }
    fn value(&self) -> Value {
        Value::Int(*self)
    }
}

impl Param for f64 {
    fn desc() -> TypeDesc {
        TypeDesc::Float
    }
    fn parse(v: &Value) -> Result<Self, ConfigError> {
        let x = match v {
            Value::Float(f) => *f,
            Value::Int(i) => *i as f64,
            _ => return Err(wrong(v, "a number")),
        };
        if x.is_finite() {
            Ok(x)
        } else {
            Err(wrong(v, "a finite number"))
        }
    }
    fn value(&self) -> Value {
        Value::Float(*self)
    }
}

impl Param for String {
    fn desc() -> TypeDesc {
        TypeDesc::Str
    }
    fn parse(v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(wrong(v, "a string")),
        }
    }
    fn value(&self) -> Value {
        Value::Str(self.clone())
    }
}

impl<T: Param> Param for Option<T> {
    fn desc() -> TypeDesc {
        TypeDesc::Optional(Box::new(T::desc()))
    }
    fn parse(v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::Null => Ok(None),
            _ => T::parse(v).map(Some),
        }
    }
    fn value(&self) -> Value {
        self.as_ref().map_or(Value::Null, T::value)
    }
}

impl<T: Param> Param for Vec<T> {
    fn desc() -> TypeDesc {
        TypeDesc::List(Box::new(T::desc()))
    }
    fn parse(v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::List(items) => {
                items.iter().enumerate().map(|(i, x)| T::parse(x).map_err(|e| e.under(&i.to_string()))).collect()
            }
            _ => Err(wrong(v, "a list")),
        }
    }
    fn value(&self) -> Value {
        Value::List(self.iter().map(T::value).collect())
    }
}

/// A list that a user may give as one value (`0.005` for `[0.005]`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OneOrList<T>(pub Vec<T>);

impl<T: Param> Param for OneOrList<T> {
    fn desc() -> TypeDesc {
        TypeDesc::OneOrList(Box::new(T::desc()))
    }
    fn parse(v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::List(_) => Vec::<T>::parse(v).map(OneOrList),
            _ => T::parse(v).map(|x| OneOrList(vec![x])),
        }
    }
    fn value(&self) -> Value {
        Value::List(self.0.iter().map(T::value).collect())
    }
}

/// The check of T applied to every element of a `OneOrList`.
pub fn each_one<T: 'static>(c: Check<T>) -> Check<OneOrList<T>> {
    let Check { allowed, test } = each(c);
    Check::new(allowed, move |v: &OneOrList<T>| test(&v.0))
}

/// An allowed-values rule of a parameter: its description (exported with the schema) and the test.
/// The test of a `Check`: the error message for a bad value.
type Test<T> = Box<dyn Fn(&T) -> Option<String>>;

pub struct Check<T> {
    pub allowed: String,
    test: Test<T>,
}

impl<T> Check<T> {
    /// `test` returns the error message for a bad value.
    pub fn new(allowed: impl Into<String>, test: impl Fn(&T) -> Option<String> + 'static) -> Self {
        Self { allowed: allowed.into(), test: Box::new(test) }
    }

    pub fn apply(&self, v: &T) -> Result<(), ConfigError> {
        (self.test)(v).map_or(Ok(()), |m| Err(ConfigError::new(m)))
    }
}

/// Integers in [lo, hi].
pub fn int_in(lo: i64, hi: i64) -> Check<i64> {
    let allowed = format!("an integer in [{lo}, {hi}]");
    let a = allowed.clone();
    Check::new(allowed, move |v: &i64| (!(lo..=hi).contains(v)).then(|| format!("must be {a}, got {v}")))
}

/// Numbers > 0, at most `max`.
pub fn positive(max: f64) -> Check<f64> {
    Check::new(format!("> 0 and <= {max:e}"), move |v| {
        if *v <= 0.0 {
            Some(format!("must be > 0, got {v}"))
        } else if *v > max {
            Some(format!("must be <= {max:e}, got {v}"))
        } else {
            None
        }
    })
}

/// Numbers >= 0, at most `max`.
pub fn non_negative(max: f64) -> Check<f64> {
    Check::new(format!(">= 0 and <= {max:e}"), move |v| {
        if *v < 0.0 {
            Some(format!("must be >= 0, got {v}"))
        } else if *v > max {
            Some(format!("must be <= {max:e}, got {v}"))
        } else {
            None
        }
    })
}

/// The most long flows a run (or a traffic group, or a route) may hold.
pub const MAX_FLOWS: i64 = 1_000_000;
/// The largest buffer, in packets or bytes.
pub const MAX_PKTS: i64 = 1 << 40;

/// Link rates: > 0, and at least 1 kb/s so that no packet's transmission time can overflow the
/// clock (see `time`).
pub fn rate_mbps() -> Check<f64> {
    Check::new("> 0 (at least 0.001) and <= 1e7", |v: &f64| {
        if *v <= 0.0 {
            Some(format!("must be > 0, got {v}"))
        } else if *v < 1e-3 {
            Some(format!("must be at least 0.001 Mb/s, got {v}"))
        } else if *v > 1e7 {
            Some(format!("must be <= 1e7 Mb/s, got {v}"))
        } else {
            None
        }
    })
}

/// Numbers in [lo, hi].
pub fn float_in(lo: f64, hi: f64) -> Check<f64> {
    // A large bound reads best as 1e9; a fraction as itself.
    let hi_text = if hi.abs() >= 1e6 { format!("{hi:e}") } else { format!("{hi}") };
    let allowed = format!("a number in [{lo}, {hi_text}]");
    let a = allowed.clone();
    Check::new(allowed, move |v: &f64| (!(lo..=hi).contains(v)).then(|| format!("must be {a}, got {v}")))
}

/// One of the names a registry lists.
pub fn one_of(names: fn() -> Vec<&'static str>) -> Check<String> {
    Check::new(format!("one of {}", names().join(", ")), move |v: &String| {
        let names = names();
        (!names.contains(&v.as_str())).then(|| format!("unknown value {v:?}; allowed: {}", names.join(", ")))
    })
}

/// The check of T applied to a present value.
pub fn opt<T: 'static>(c: Check<T>) -> Check<Option<T>> {
    let Check { allowed, test } = c;
    Check::new(format!("null or {allowed}"), move |v: &Option<T>| v.as_ref().and_then(&test))
}

/// The check of T applied to every element (errors name the index).
pub fn each<T: 'static>(c: Check<T>) -> Check<Vec<T>> {
    let Check { allowed, test } = c;
    Check::new(format!("each {allowed}"), move |v: &Vec<T>| {
        v.iter().enumerate().find_map(|(i, x)| test(x).map(|m| format!("element {i} {m}")))
    })
}

/// Looks up `key` in a mapping's entries.
pub fn lookup<'a>(map: &'a [(String, Value)], key: &str) -> Option<&'a Value> {
    map.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

pub fn as_map<'a>(v: &'a Value, what: &str) -> Result<&'a [(String, Value)], ConfigError> {
    match v {
        Value::Map(m) => Ok(m),
        _ => Err(wrong(v, &format!("a mapping of {what}"))),
    }
}

/// A record given as a list of its fields in order (`[10.0, 5]` for `{time_s: 10.0, buffer_pkts: 5}`).
pub fn positional(v: &Value, keys: &[&str]) -> Option<Value> {
    match v {
        Value::List(items) if items.len() == keys.len() && !keys.is_empty() => {
            Some(Value::Map(keys.iter().map(|k| k.to_string()).zip(items.iter().cloned()).collect()))
        }
        _ => None,
    }
}

/// Levenshtein distance, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != cb) as usize).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The closest allowed name, if close enough to be a typo.
pub fn did_you_mean<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed.iter().map(|a| (distance(key, a), *a)).filter(|(d, a)| *d <= 2.max(a.len() / 4)).min().map(|(_, a)| a)
}

/// An error for an unknown key, with a suggestion and the allowed keys.
pub fn unknown_key(key: &str, allowed: &[&str], context: &str) -> ConfigError {
    let hint = did_you_mean(key, allowed).map_or(String::new(), |s| format!(" (did you mean {s}?)"));
    ConfigError::at(key, format!("unknown key{context}{hint}; allowed: {}", allowed.join(", ")))
}

/// Fails on the first key of `map` not in `allowed`.
pub fn check_keys(map: &[(String, Value)], allowed: &[&str], context: &str) -> Result<(), ConfigError> {
    match map.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
        Some((k, _)) => Err(unknown_key(k, allowed, context)),
        None => Ok(()),
    }
}

/// Joins `///` doc lines into one sentence.
pub fn doc_text(lines: &[&str]) -> String {
    lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ").trim().to_string()
}

/// Declares a record of parameters: the struct, its `Default`, and its `Param` impl (parsing with
/// validation, the schema, and the value). Each field reads
/// `/// doc` `name: Type = default, unit "u", check rule;` (unit and check optional).
#[macro_export]
macro_rules! params {
    (
        $(#[doc = $sdoc:literal])*
        pub struct $name:ident as $label:literal {
            $(
                $(#[doc = $doc:literal])*
                $field:ident : $ty:ty = $default:expr $(, unit $unit:literal)? $(, check $check:expr)? ;
            )*
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }

        impl $name {
            pub const KEYS: &'static [&'static str] = &[$(stringify!($field)),*];

            pub fn specs() -> Vec<$crate::params::ParamSpec> {
                vec![$(
                    $crate::params::ParamSpec {
                        key: stringify!($field),
                        ty: <$ty as $crate::params::Param>::desc(),
                        default: $crate::params::Param::value(&{ let d: $ty = $default; d }),
                        unit: $crate::params!(@unit $($unit)?),
                        doc: $crate::params::doc_text(&[$($doc),*]),
                        allowed: $crate::params!(@allowed $($check)?),
                    },
                )*]
            }
        }

        impl $crate::params::Param for $name {
            fn desc() -> $crate::params::TypeDesc {
                $crate::params::TypeDesc::Record {
                    name: $label,
                    doc: $crate::params::doc_text(&[$($sdoc),*]),
                    fields: Self::specs(),
                }
            }

            fn parse(v: &$crate::params::Value) -> Result<Self, $crate::params::ConfigError> {
                let positional = $crate::params::positional(v, Self::KEYS);
                let map = $crate::params::as_map(positional.as_ref().unwrap_or(v), &Self::KEYS.join(", "))?;
                $crate::params::check_keys(map, Self::KEYS, "")?;
                #[allow(unused_mut)]
                let mut out = Self::default();
                $(
                    if let Some(x) = $crate::params::lookup(map, stringify!($field)) {
                        out.$field = $crate::params::Param::parse(x).map_err(|e| e.under(stringify!($field)))?;
                    }
                    $( ($check).apply(&out.$field).map_err(|e| e.under(stringify!($field)))?; )?
                )*
                Ok(out)
            }

            fn value(&self) -> $crate::params::Value {
                $crate::params::Value::Map(vec![
                    $( (stringify!($field).to_string(), $crate::params::Param::value(&self.$field)), )*
                ])
            }
        }
    };
    (@unit) => { "" };
    (@unit $unit:literal) => { $unit };
    (@allowed) => { String::new() };
    (@allowed $check:expr) => { ($check).allowed };
}

/// A tagged union: a registry of variants, each with its own parameters, and the parameters common
/// to all of them. A value is a mapping (`{tag: variant, common..., variant params...}`) or a
/// string naming a preset or a variant.
pub struct UnionDef {
    /// The section's name, for messages ("tcp", "topology").
    pub name: &'static str,
    pub tag: &'static str,
    pub default_tag: &'static str,
    /// The registry of variants (registries embed a `VariantDef` beside what builds the variant).
    pub variants: fn() -> Vec<&'static VariantDef>,
    pub presets: &'static [PresetDef],
    /// Names no longer in use: (old name, what to use instead), said when the old one is given.
    pub renamed: &'static [(&'static str, &'static str)],
}

pub struct VariantDef {
    pub name: &'static str,
    pub doc: &'static str,
    /// The variant's own parameters (a `params!` record).
    pub params: fn() -> Vec<ParamSpec>,
    pub keys: &'static [&'static str],
    /// Validates the variant's parameters and fills in their defaults.
    pub normalize: fn(&Value) -> Result<Value, ConfigError>,
}

/// A named set of settings of the union's tag and common parameters.
pub struct PresetDef {
    pub name: &'static str,
    pub doc: &'static str,
    pub set: &'static [(&'static str, Setting)],
}

/// A preset's value for one key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setting {
    Str(&'static str),
    /// For a float parameter.
    Num(f64),
    Bool(bool),
}

impl Setting {
    pub fn value(self) -> Value {
        match self {
            Setting::Str(s) => Value::str(s),
            Setting::Num(x) => Value::Float(x),
            Setting::Bool(b) => Value::Bool(b),
        }
    }
}

/// `normalize` for a variant whose parameters are the record `P`.
pub fn normalize<P: Param>(v: &Value) -> Result<Value, ConfigError> {
    P::parse(v).map(|p| p.value())
}

/// A parsed union value: the variant, the common parameters, the variant's parameters (validated,
/// with defaults filled in) and the label (the first preset it matches, else the variant's name).
#[derive(Clone, Debug, PartialEq)]
pub struct Tagged<C> {
    pub variant: &'static str,
    pub common: C,
    pub params: Value,
    pub label: &'static str,
}

impl UnionDef {
    pub fn names(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = self.presets.iter().map(|p| p.name).collect();
        for v in (self.variants)() {
            if !out.contains(&v.name) {
                out.push(v.name);
            }
        }
        out
    }

    pub fn variant_names(&self) -> Vec<&'static str> {
        (self.variants)().iter().map(|v| v.name).collect()
    }

    pub fn variant(&self, name: &str) -> Option<&'static VariantDef> {
        (self.variants)().into_iter().find(|v| v.name == name)
    }

    fn expand(&self, name: &str) -> Result<Value, ConfigError> {
        if let Some(p) = self.presets.iter().find(|p| p.name == name) {
            return Ok(Value::Map(p.set.iter().map(|(k, v)| (k.to_string(), v.value())).collect()));
        }
        if self.variant(name).is_some() {
            return Ok(Value::map(vec![(self.tag, Value::str(name))]));
        }
        Err(ConfigError::new(self.unknown(name, &self.names())))
    }

    /// What to say of an unknown name: what replaced it if it was renamed, else what is allowed.
    fn unknown(&self, name: &str, allowed: &[&str]) -> String {
        match self.renamed.iter().find(|(old, _)| *old == name) {
            Some((_, new)) => format!("{} {name:?} was renamed: use {new}", self.name),
            None => format!("unknown {} {name:?}; allowed: {}", self.name, allowed.join(", ")),
        }
    }

    /// Parses a union value whose common parameters are the record `C`.
    pub fn parse<C: Param + HasKeys>(&'static self, v: &Value) -> Result<Tagged<C>, ConfigError> {
        let expanded;
        let v = match v {
            Value::Str(s) => {
                expanded = self.expand(s)?;
                &expanded
            }
            other => other,
        };
        let map = as_map(v, &format!("{} parameters, or a name ({})", self.name, self.names().join(", ")))?;
        let tag = match lookup(map, self.tag) {
            None => self.default_tag,
            Some(Value::Str(s)) => s.as_str(),
            Some(other) => return Err(wrong(other, "a string").under(self.tag)),
        };
        let Some(variant) = self.variant(tag) else {
            return Err(ConfigError::at(self.tag, self.unknown(tag, &self.variant_names())));
        };
        let mut allowed = vec![self.tag];
        allowed.extend_from_slice(C::keys());
        allowed.extend_from_slice(variant.keys);
        check_keys(map, &allowed, &format!(" for {} {}", self.name, variant.name))?;
        let pick =
            |keys: &[&str]| Value::Map(map.iter().filter(|(k, _)| keys.contains(&k.as_str())).cloned().collect());
        let common = C::parse(&pick(C::keys()))?;
        let params = (variant.normalize)(&pick(variant.keys))?;
        let label = self.label(variant.name, &common.value(), &params);
        Ok(Tagged { variant: variant.name, common, params, label })
    }

    /// The preset whose every setting (tag, common or the variant's own parameters) the value has.
    fn label(&self, variant: &'static str, common: &Value, params: &Value) -> &'static str {
        let setting = |k: &str| match k == self.tag {
            true => Some(Value::str(variant)),
            false => common.get(k).or_else(|| params.get(k)).cloned(),
        };
        self.presets
            .iter()
            .find(|p| p.set.iter().all(|(k, v)| setting(k) == Some(v.value())))
            .map_or(variant, |p| p.name)
    }

    pub fn desc(&self, common: Vec<ParamSpec>) -> TypeDesc {
        TypeDesc::Union(UnionDesc {
            name: self.name,
            tag: self.tag,
            default_tag: self.default_tag,
            common,
            variants: (self.variants)().iter().map(|v| (v.name, v.doc, (v.params)())).collect(),
            presets: self.presets.iter().map(|p| (p.name, p.doc, p.set.to_vec())).collect(),
            renamed: self.renamed.to_vec(),
        })
    }
}

impl<C: Param> Tagged<C> {
    /// The full value: tag, common parameters, then the variant's.
    pub fn to_value(&self, def: &UnionDef) -> Value {
        let mut out = vec![(def.tag.to_string(), Value::str(self.variant))];
        if let Value::Map(m) = self.common.value() {
            out.extend(m);
        }
        if let Value::Map(m) = &self.params {
            out.extend(m.iter().cloned());
        }
        Value::Map(out)
    }
}

/// Records expose their keys (for unions splitting a mapping between common and variant keys).
pub trait HasKeys {
    fn keys() -> &'static [&'static str];
}

/// Declares a registry of components, one file each: `registry!(POLICIES: PolicyEntry = [fixed,
/// bdp])` writes `pub mod fixed; pub mod bdp;` and the table `[fixed::ENTRY, bdp::ENTRY]`, so that
/// a new component is its file and one line.
#[macro_export]
macro_rules! registry {
    ($(#[$doc:meta])* $table:ident: $entry:ty = [$($module:ident),* $(,)?]) => {
        $(pub mod $module;)*
        $(#[$doc])*
        pub const $table: &[$entry] = &[$($module::ENTRY,)*];
    };
}

/// Implements `Param` for a union section: `union_param!(TcpConfig, TCP_UNION, TcpCommon)`.
#[macro_export]
macro_rules! union_param {
    ($name:ident, $def:path, $common:ty) => {
        impl $crate::params::HasKeys for $common {
            fn keys() -> &'static [&'static str] {
                <$common>::KEYS
            }
        }

        impl $crate::params::Param for $name {
            fn desc() -> $crate::params::TypeDesc {
                $def.desc(<$common>::specs())
            }
            fn parse(v: &$crate::params::Value) -> Result<Self, $crate::params::ConfigError> {
                $def.parse::<$common>(v).map($name)
            }
            fn value(&self) -> $crate::params::Value {
                self.0.to_value(&$def)
            }
        }

        impl $name {
            /// A preset or variant by name (panics on an unknown name: for defaults and tests).
            #[allow(dead_code)]
            pub fn named(name: &str) -> Self {
                <Self as $crate::params::Param>::parse(&$crate::params::Value::str(name)).expect("a registered name")
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::params! {
        /// A test record.
        pub struct Link as "Link" {
            /// Rate.
            rate_mbps: f64 = 10.0, unit "Mb/s", check positive(1e6);
            /// Buffer.
            buffer_pkts: Option<i64> = None, unit "pkts", check opt(int_in(0, 100));
            /// Delays.
            delays_ms: Vec<f64> = vec![], check each(non_negative(10.0));
        }
    }

    fn m(entries: Vec<(&str, Value)>) -> Value {
        Value::map(entries)
    }

    #[test]
    fn defaults_fill_missing_keys() {
        let l = Link::parse(&m(vec![("rate_mbps", Value::Int(5))])).unwrap();
        assert_eq!(l, Link { rate_mbps: 5.0, buffer_pkts: None, delays_ms: vec![] });
        assert_eq!(Link::parse(&l.value()).unwrap(), l);
    }

    #[test]
    fn errors_name_the_dotted_key_and_the_allowed_values() {
        let e = Link::parse(&m(vec![("buffer_pkts", Value::Int(-1))])).unwrap_err();
        assert_eq!(e.to_string(), "buffer_pkts: must be an integer in [0, 100], got -1");
        let e =
            Link::parse(&m(vec![("delays_ms", Value::List(vec![Value::Float(1.0), Value::Float(-2.0)]))])).unwrap_err();
        assert_eq!(e.field, "delays_ms");
        assert!(e.message.contains("element 1"), "{e}");
        let e = Link::parse(&m(vec![("delays_ms", Value::List(vec![Value::str("x")]))])).unwrap_err();
        assert_eq!(e.to_string(), "delays_ms.0: must be a number, got \"x\"");
        let e = Link::parse(&m(vec![("rate_mbps", Value::Bool(true))])).unwrap_err();
        assert_eq!(e.to_string(), "rate_mbps: must be a number, got true");
        let e = Link::parse(&m(vec![("rate_mbps", Value::Float(f64::NAN))])).unwrap_err();
        assert!(e.message.contains("finite"));
    }

    #[test]
    fn unknown_keys_are_errors_with_a_suggestion() {
        let e = Link::parse(&m(vec![("rate_mpbs", Value::Int(5))])).unwrap_err();
        assert_eq!(e.field, "rate_mpbs");
        assert!(e.message.contains("did you mean rate_mbps?"), "{e}");
        assert!(e.message.contains("allowed: rate_mbps, buffer_pkts, delays_ms"), "{e}");
    }

    #[test]
    fn schema_lists_every_field_with_unit_and_default() {
        let specs = Link::specs();
        assert_eq!(specs.iter().map(|s| s.key).collect::<Vec<_>>(), Link::KEYS);
        assert_eq!(specs[0].unit, "Mb/s");
        assert_eq!(specs[0].default, Value::Float(10.0));
        assert_eq!(specs[0].doc, "Rate.");
        assert!(specs[1].allowed.contains("[0, 100]"));
    }
}
