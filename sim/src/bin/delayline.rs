//! `bsw-delayline`: the propagation delay of the kernel backend's testbed (issue 71;
//! docs/kernel.md). This machine's kernel has no netem, so the router namespace sends the ACK path
//! through a TUN device (policy routing) and this process holds each packet for its flow's RTT
//! before it writes it back. A flow is its TCP port on the sender's side (the ACK's destination
//! port): `--delays FILE` lists `PORT MICROSECONDS` lines, and `default MICROSECONDS`.
//!
//! Timing: the release time of every packet is its arrival plus its delay, on CLOCK_MONOTONIC; the
//! process sleeps with ppoll(2) under a 1 ns timer slack (PR_SET_TIMERSLACK; a thread's default
//! is 50 us) until `--spin-us` before the next release and spins the rest. Every release's
//! lateness (release - due) goes into a histogram; when stdin closes (the backend ends the run,
//! or died) it prints them as one JSON line: packets, bytes, lateness p50 / p99 / max in ns.
//! Linux: tun(4) (IFF_TUN | IFF_NO_PI), ppoll(2), prctl(2).

#[cfg(target_os = "linux")]
mod tun {
    use std::collections::{BinaryHeap, HashMap};
    use std::ffi::CString;
    use std::io;
    use std::time::Instant;

    use hdrhistogram::Histogram;

    const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
    const IFF_TUN: libc::c_short = 0x0001;
    const IFF_NO_PI: libc::c_short = 0x1000;
    const MAX_PKT: usize = 65536;

    #[repr(C)]
    struct IfReq {
        name: [libc::c_char; libc::IFNAMSIZ],
        flags: libc::c_short,
        _pad: [u8; 22],
    }

    /// A packet waiting for its release (ordered by due time, then arrival: FIFO per delay).
    struct Held {
        due_ns: u64,
        seq: u64,
        bytes: Vec<u8>,
    }
    impl PartialEq for Held {
        fn eq(&self, o: &Self) -> bool {
            (self.due_ns, self.seq) == (o.due_ns, o.seq)
        }
    }
    impl Eq for Held {}
    impl PartialOrd for Held {
        fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Held {
        fn cmp(&self, o: &Self) -> std::cmp::Ordering {
            (o.due_ns, o.seq).cmp(&(self.due_ns, self.seq)) // a min-heap
        }
    }

    pub struct Options {
        pub tun: String,
        pub delays_ns: HashMap<u16, u64>,
        pub default_ns: u64,
        pub spin_ns: u64,
    }

    fn open_tun(name: &str) -> io::Result<i32> {
        let path = CString::new("/dev/net/tun").unwrap();
        // SAFETY: plain syscalls on a path and an ifreq we own; the fd is checked.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
        for (i, b) in name.bytes().take(libc::IFNAMSIZ - 1).enumerate() {
            req.name[i] = b as libc::c_char;
        }
        // SAFETY: TUNSETIFF reads the ifreq we pass.
        if unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut req) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(fd)
    }

    /// The flow a packet belongs to: the destination port of a TCP segment over IPv4.
    fn port(pkt: &[u8]) -> Option<u16> {
        if pkt.len() < 20 || pkt[0] >> 4 != 4 || pkt[9] != 6 {
            return None;
        }
        let ihl = usize::from(pkt[0] & 0x0f) * 4;
        (pkt.len() >= ihl + 4).then(|| u16::from_be_bytes([pkt[ihl + 2], pkt[ihl + 3]]))
    }

    /// Waits until `fds` are readable or `wait_ns` passes.
    fn wait(fds: &mut [libc::pollfd], wait_ns: Option<u64>) {
        let ts =
            wait_ns.map(|ns| libc::timespec { tv_sec: (ns / 1_000_000_000) as _, tv_nsec: (ns % 1_000_000_000) as _ });
        let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: fds and the timespec outlive the call.
        unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as _, tsp, std::ptr::null()) };
    }

    /// Real-time scheduling (SCHED_FIFO, priority REALTIME_PRIORITY) and memory locked, so that
    /// the senders and receivers of the run, ordinary tasks, never delay a release; RT throttling
    /// (sched_rt_runtime_us) still leaves them 5% of each core. False where not permitted.
    fn realtime() -> bool {
        let param = libc::sched_param { sched_priority: REALTIME_PRIORITY };
        // SAFETY: plain syscalls on this process with a parameter we own.
        let fifo = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0;
        // SAFETY: as above.
        unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
        fifo
    }

    const REALTIME_PRIORITY: libc::c_int = 10;

    pub fn run(o: &Options) -> io::Result<String> {
        // SAFETY: prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
        let fifo = realtime();
        let fd = open_tun(&o.tun)?;
        let t0 = Instant::now();
        let now_ns = || t0.elapsed().as_nanos() as u64;
        let mut held: BinaryHeap<Held> = BinaryHeap::new();
        // 1 ns to 100 s (saturating_record clamps to the highest value: an auto-resizing histogram starts at 2).
        let mut late = Histogram::<u64>::new_with_bounds(1, 100_000_000_000, 3).expect("histogram");
        let (mut seq, mut packets, mut bytes) = (0u64, 0u64, 0u64);
        let mut buf = vec![0u8; MAX_PKT];
        let mut fds = [
            libc::pollfd { fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 },
        ];
        loop {
            // Release what is due.
            while held.peek().is_some_and(|h| h.due_ns <= now_ns()) {
                let h = held.pop().unwrap();
                // The release is the write's start: the write itself runs the receiving stack
                // (the ACK's processing, and the sender's next segments) in this thread.
                let released_ns = now_ns();
                // SAFETY: writes a buffer we own to our fd.
                let n = unsafe { libc::write(fd, h.bytes.as_ptr().cast(), h.bytes.len()) };
                if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock {
                    held.push(h); // the device's queue is full: again at the next turn
                    break;
                }
                late.saturating_record(released_ns.saturating_sub(h.due_ns));
                packets += 1;
                bytes += h.bytes.len() as u64;
            }
            // Sleep to just before the next release, then spin; wake at once for arrivals.
            let next = held.peek().map(|h| h.due_ns.saturating_sub(now_ns()));
            match next {
                Some(ns) if ns <= o.spin_ns => {
                    fds[0].revents = 0;
                    wait(&mut fds[..1], Some(0));
                }
                Some(ns) => wait(&mut fds, Some(ns - o.spin_ns)),
                None => wait(&mut fds, None),
            }
            if fds[1].revents != 0 {
                let mut b = [0u8; 64];
                // SAFETY: reads into a buffer we own.
                if unsafe { libc::read(0, b.as_mut_ptr().cast(), b.len()) } <= 0 {
                    break; // stdin closed: the run is over
                }
            }
            // Read every packet waiting.
            loop {
                // SAFETY: reads into a buffer we own.
                let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                if n <= 0 {
                    break;
                }
                let pkt = buf[..n as usize].to_vec();
                let delay = port(&pkt).and_then(|p| o.delays_ns.get(&p).copied()).unwrap_or(o.default_ns);
                held.push(Held { due_ns: now_ns() + delay, seq, bytes: pkt });
                seq += 1;
            }
            fds[0].revents = 0;
            fds[1].revents = 0;
        }
        let q = |p: f64| late.value_at_quantile(p);
        Ok(format!(
            "{{\"packets\": {packets}, \"bytes\": {bytes}, \"held_at_end\": {}, \"lateness_p50_ns\": {}, \
             \"lateness_p99_ns\": {}, \"lateness_max_ns\": {}, \"realtime\": {fifo}}}",
            held.len(),
            q(0.5),
            q(0.99),
            late.max()
        ))
    }
}

#[cfg(target_os = "linux")]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let (Some(tun), Some(delays)) = (value("--tun"), value("--delays")) else {
        eprintln!("usage: bsw-delayline --tun NAME --delays FILE [--spin-us N]");
        std::process::exit(2);
    };
    let mut opts = tun::Options {
        tun,
        delays_ns: Default::default(),
        default_ns: 0,
        spin_ns: value("--spin-us").map_or(30, |v| v.parse().expect("--spin-us: a number")) * 1000,
    };
    for line in std::fs::read_to_string(&delays).expect("--delays: a readable file").lines() {
        let mut parts = line.split_whitespace();
        if let (Some(key), Some(us)) = (parts.next(), parts.next()) {
            let ns = (us.parse::<f64>().expect("delay: microseconds") * 1e3) as u64;
            match key {
                "default" => opts.default_ns = ns,
                port => {
                    opts.delays_ns.insert(port.parse().expect("a port"), ns);
                }
            }
        }
    }
    match tun::run(&opts) {
        Ok(stats) => println!("{stats}"),
        Err(e) => {
            eprintln!("bsw-delayline: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("bsw-delayline runs on Linux only");
    std::process::exit(2);
}
