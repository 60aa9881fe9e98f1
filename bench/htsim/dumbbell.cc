// buffersweep's dumbbell in htsim (Broadcom/csg-htsim, its sim/ library, commit 841d9e7), for the
// speed comparison of `python -m bench.htsim` (docs/performance.md, "Against htsim").
//
// Long-lived flows of htsim's own TCP (TcpSrc/TcpSink, sim/tcp.cpp: NewReno-style) share one
// drop-tail bottleneck. Per flow, data: [access Queue, when access_mbps > 0] -> Pipe(RTT/2) ->
// bottleneck Queue -> a departure counter -> TcpSink; ACKs: Pipe(RTT/2) -> TcpSrc (no queue). With
// split=0 the whole RTT is on the ACK pipe: the same events per packet as our engine, whose
// return path is one delay line. RTTs are uniform in rtt_ms +- rtt_spread_ms / 2, starts uniform
// in [0, start_window_s], both from this file's own generator (not our engine's streams).
//
// Settings as our engine's defaults where htsim has a knob: first window 2 packets, ssthresh the
// window cap (ns-2's one-way TCP). htsim's Queue counts the packet in service against its size,
// as our buffer_pkts does not: the bottleneck holds buffer_pkts + 1 packets. htsim keeps its own
// minimum RTO (250 ms) and scans retransmission timers every 10 ms.
//
// Usage: dumbbell key=value ... (the keys of `main`); prints one JSON line on stderr (htsim
// writes its own messages to stdout).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "tcp.h"

// Counts what leaves the bottleneck, in all and after the warm-up, and passes it on.
class Departures : public PacketSink {
  public:
    explicit Departures(simtime_picosec warm) : warm_(warm) {}
    void receivePacket(Packet& pkt) override {
        ++all;
        if (EventList::now() >= warm_) ++measured;
        pkt.sendOn();
    }
    const string& nodename() override { return name_; }
    uint64_t all = 0, measured = 0;

  private:
    simtime_picosec warm_;
    string name_ = "departures";
};

int main(int argc, char** argv) {
    std::map<std::string, double> p = {
        {"core_mbps", 45},    {"flows", 60},          {"buffer_pkts", 73},   {"duration_s", 150},
        {"warmup_s", 1},      {"rtt_ms", 100},        {"rtt_spread_ms", 40}, {"start_window_s", 1},
        {"pkt_bytes", 1000},  {"access_mbps", 0},     {"wmax_pkts", 10000},  {"seed", 1},
        {"split", 1},
    };
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        size_t eq = arg.find('=');
        if (eq == std::string::npos || !p.count(arg.substr(0, eq))) {
            fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
        p[arg.substr(0, eq)] = atof(arg.c_str() + eq + 1);
    }
    const auto t0 = std::chrono::steady_clock::now();
    Packet::set_packet_size((int)p["pkt_bytes"]);
    const uint64_t mss = Packet::data_packet_size();
    EventList events;
    events.setEndtime(timeFromSec(p["duration_s"]));
    std::mt19937_64 gen((uint64_t)p["seed"]);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);

    Queue bottleneck(speedFromMbps(p["core_mbps"]), memFromPkt(p["buffer_pkts"] + 1), events, nullptr);
    Departures departures(timeFromSec(p["warmup_s"]));
    TcpRtxTimerScanner rtx(timeFromMs(10), events);
    const bool split = p["split"] != 0;
    for (int f = 0; f < (int)p["flows"]; f++) {
        const double start_s = uniform(gen) * p["start_window_s"];
        const double rtt_ms = p["rtt_ms"] + (uniform(gen) - 0.5) * p["rtt_spread_ms"];
        auto* src = new TcpSrc(nullptr, nullptr, events);
        src->set_cwnd(2 * mss);
        src->set_ssthresh((uint64_t)p["wmax_pkts"] * mss);
        rtx.registerTcp(*src);
        auto* sink = new TcpSink();
        auto* forward = new Route();
        if (p["access_mbps"] > 0)
            forward->push_back(new Queue(speedFromMbps(p["access_mbps"]), memFromPkt(10000), events, nullptr));
        if (split) forward->push_back(new Pipe(timeFromMs(rtt_ms / 2), events));
        forward->push_back(&bottleneck);
        forward->push_back(&departures);
        forward->push_back(sink);
        auto* back = new Route();
        back->push_back(new Pipe(timeFromMs(split ? rtt_ms / 2 : rtt_ms), events));
        back->push_back(src);
        src->connect(*forward, *back, *sink, timeFromSec(start_s));
    }
    const auto t1 = std::chrono::steady_clock::now();
    uint64_t n = 0;
    while (events.doNextEvent()) n++;
    const auto t2 = std::chrono::steady_clock::now();
    const double loop_s = std::chrono::duration<double>(t2 - t1).count();
    const double measured_s = p["duration_s"] - p["warmup_s"];
    fprintf(stderr,
            "{\"engine\": \"%s\", \"setup_s\": %.4f, \"loop_s\": %.4f, \"events\": %llu, \"bottleneck_pkts\": %llu, "
            "\"utilization\": %.6f, \"drops\": %d}\n",
            split ? "htsim" : "htsim-1pipe", std::chrono::duration<double>(t1 - t0).count(), loop_s,
            (unsigned long long)n, (unsigned long long)departures.all,
            departures.measured * p["pkt_bytes"] * 8 / (p["core_mbps"] * 1e6 * measured_s), bottleneck.num_drops());
    return 0;
}
