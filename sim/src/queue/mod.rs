//! Queue disciplines (`queue`): what a link's buffer admits, marks, drops and serves next. One
//! file each, one line in `disciplines!`. Details: docs/engine.md, `queue/mod.rs`.

use crate::packet::Packet;
use crate::params::{ConfigError, UnionDef, Value, VariantDef};
use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Whether `len` packets of `bytes` bytes waiting, plus an arrival of `add` bytes, reach the
    /// hard limit (the packet in service counts, as in ns-2: a limit of n leaves n - 1 places).
    #[inline(always)]
    pub fn full(self, len: usize, bytes: u64, add: u64) -> bool {
        match self {
            Limit::Packets(n) => len as u64 + 1 >= n,
            Limit::Bytes(b) => bytes + add >= b,
        }
    }
}

/// Why a queue dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The discipline chose to (RED, CoDel, PIE, FQ-CoDel's per-queue CoDel).
    Early,
    /// The hard limit (`buffer_pkts` / `buffer_bytes`): the physical memory was full.
    Overflow,
}

/// What a queue did besides queueing and serving, since the link last read it: the packets it
/// dropped (the arrival, or others: CoDel drops at the head, FQ-CoDel from the fattest queue)
/// and how many it marked CE.
#[derive(Default)]
pub struct Verdicts {
    pub dropped: Vec<(Packet, Cause)>,
    pub marks: u64,
}

impl Verdicts {
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.marks == 0 && self.dropped.is_empty()
    }
}

/// A discipline's control state, sampled into the time series (NULL where it has none).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueState {
    /// RED's average queue (packets, or bytes in byte mode).
    pub red_avg: Option<f64>,
    /// CoDel's next drop time (s; None when not dropping) and drop count.
    pub codel_drop_next_s: Option<f64>,
    pub codel_count: Option<u64>,
    /// PIE's drop probability.
    pub pie_prob: Option<f64>,
}

/// A link's buffer.
pub trait QueueDiscipline: Send {
    /// Takes `pkt` (whose `stamp` is now) and returns true if it was queued; a drop, of it or of
    /// another packet, and a mark are recorded in `out`.
    fn enqueue(&mut self, pkt: Packet, now: Time, out: &mut Verdicts) -> bool;
    /// The next packet to transmit (a discipline may drop others first, into `out`).
    fn dequeue(&mut self, now: Time, out: &mut Verdicts) -> Option<Packet>;
    /// Packets waiting.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn limit(&self) -> Limit;
    /// Changes the capacity (a buffer controller); never drops what is queued.
    fn set_limit(&mut self, limit: Limit);
    /// The packets waiting (in service order for a FIFO).
    fn packets(&self) -> Box<dyn Iterator<Item = &Packet> + '_>;
    fn state(&self) -> QueueState {
        QueueState::default()
    }

    /// The limit expressed in packets (bytes limits are divided by `pkt_bytes`), for reporting.
    fn capacity_pkts(&self, pkt_bytes: u32) -> f64 {
        match self.limit() {
            Limit::Packets(n) => n as f64,
            Limit::Bytes(b) => b as f64 / pkt_bytes as f64,
        }
    }
}

/// What a discipline is built for: its link and the run.
#[derive(Clone, Copy, Debug)]
pub struct LinkInfo {
    pub rate_bps: f64,
    pub pkt_bytes: u32,
    /// The run's seed and the link's id: its random stream.
    pub seed: u64,
    pub link: u64,
}

/// A registered discipline: its parameters (the union variant), whether it marks ECN with these
/// parameters, and its constructor.
pub struct QueueEntry {
    pub def: VariantDef,
    pub marks: fn(&Value) -> bool,
    pub make: fn(&Value, Limit, &LinkInfo) -> Discipline,
}

/// Declares the disciplines: for each `module::Type`, `pub mod module;`, a `Discipline` variant
/// dispatching `QueueDiscipline` to it (a queue operation is on every packet's path, so links
/// hold this enum, inlined, rather than a boxed trait object), and `module::ENTRY` in `QUEUES`.
macro_rules! disciplines {
    ($($module:ident::$ty:ident),* $(,)?) => {
        $(pub mod $module;)*

        pub enum Discipline {
            $($ty($module::$ty),)*
        }

        impl QueueDiscipline for Discipline {
            #[inline(always)]
            fn enqueue(&mut self, pkt: Packet, now: Time, out: &mut Verdicts) -> bool {
                match self { $(Discipline::$ty(q) => q.enqueue(pkt, now, out),)* }
            }
            #[inline(always)]
            fn dequeue(&mut self, now: Time, out: &mut Verdicts) -> Option<Packet> {
                match self { $(Discipline::$ty(q) => q.dequeue(now, out),)* }
            }
            #[inline(always)]
            fn len(&self) -> usize {
                match self { $(Discipline::$ty(q) => q.len(),)* }
            }
            fn limit(&self) -> Limit {
                match self { $(Discipline::$ty(q) => q.limit(),)* }
            }
            fn set_limit(&mut self, limit: Limit) {
                match self { $(Discipline::$ty(q) => q.set_limit(limit),)* }
            }
            fn packets(&self) -> Box<dyn Iterator<Item = &Packet> + '_> {
                match self { $(Discipline::$ty(q) => q.packets(),)* }
            }
            fn state(&self) -> QueueState {
                match self { $(Discipline::$ty(q) => q.state(),)* }
            }
        }

        /// The queue disciplines (`queue`).
        pub const QUEUES: &[QueueEntry] = &[$($module::ENTRY,)*];
    };
}

/// The `QueueDiscipline` methods of a discipline whose packets wait in `self.fifo` (a
/// `droptail::Fifo`) under `self.limit`.
macro_rules! fifo_methods {
    () => {
        #[inline(always)]
        fn len(&self) -> usize {
            self.fifo.len()
        }

        fn limit(&self) -> Limit {
            self.limit
        }

        fn set_limit(&mut self, limit: Limit) {
            self.limit = limit;
        }

        fn packets(&self) -> Box<dyn Iterator<Item = &Packet> + '_> {
            Box::new(self.fifo.iter())
        }
    };
}
pub(crate) use fifo_methods;

// The disciplines: one line each.
disciplines! {
    droptail::DropTail,
    red::Red,
    codel::Codel,
    pie::Pie,
    fq_codel::FqCodel,
    step::Step,
}

crate::params! {
    /// Settings common to every queue discipline (none yet).
    pub struct QueueCommon as "QueueCommon" {}
}

pub static QUEUE: UnionDef = UnionDef {
    name: "queue",
    tag: "name",
    default_tag: "droptail",
    variants: || QUEUES.iter().map(|e| &e.def).collect(),
    presets: &[],
    renamed: &[],
};

/// A `queue` section of a run config.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig(pub crate::params::Tagged<QueueCommon>);

crate::union_param!(QueueConfig, QUEUE, QueueCommon);

impl QueueConfig {
    fn entry(&self) -> &'static QueueEntry {
        QUEUES.iter().find(|e| e.def.name == self.0.variant).expect("validated queue")
    }

    pub fn name(&self) -> &'static str {
        self.0.variant
    }

    /// The discipline has a parameter `key`.
    pub fn has_param(&self, key: &str) -> bool {
        self.entry().def.keys.contains(&key)
    }

    /// The discipline marks ECN-capable packets CE (instead of dropping them early).
    pub fn marks(&self) -> bool {
        (self.entry().marks)(&self.0.params)
    }

    pub fn make(&self, limit: Limit, link: &LinkInfo) -> Discipline {
        (self.entry().make)(&self.0.params, limit, link)
    }
}

pub fn names() -> Vec<&'static str> {
    QUEUES.iter().map(|e| e.def.name).collect()
}

/// `marks` for a discipline that never marks.
pub fn never(_: &Value) -> bool {
    false
}

/// `marks` for a discipline whose `ecn` parameter says.
pub fn ecn_param(v: &Value) -> bool {
    matches!(v.get("ecn"), Some(Value::Bool(true)))
}

/// A cross-field check's error, named under the discipline's key.
pub fn invalid(field: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::at(field, message)
}

/// A probability or weight in (0, 1].
pub fn fraction() -> crate::params::Check<f64> {
    crate::params::Check::new("a number in (0, 1]", |v: &f64| {
        (!(*v > 0.0 && *v <= 1.0)).then(|| format!("must be in (0, 1], got {v}"))
    })
}
