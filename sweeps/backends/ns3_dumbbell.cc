// buffersweep's dumbbell in ns-3 (3.44, PyPI `ns3`), for the ns3 backend (sweeps/backends/ns3.py),
// which compiles this file once per process with cppyy and calls bsw::Run once per run. No Python
// runs inside Simulator::Run(): every trace sink is here (a Python callback per packet would be
// about 100x slower, as measured; docs/performance.md, "Backends").
//
// The scenario mirrors ns2_dumbbell.tcl: N senders, each on its own access link that carries the
// flow's whole two-way propagation delay (rtt/2 each way), into router r0; a zero-delay DropTail
// bottleneck r0 -> r1 of buffer_pkts packets; one receiver node behind r1 with a PacketSink per
// flow. With queue=droptail, flow control is disabled before devices are installed, so no
// traffic-control qdisc sits above the device queue: the DropTailQueue is the only queue and its
// Drop trace sees every drop. With another discipline (Params::qdisc, its attributes set through
// Config::SetDefault), the bottleneck keeps flow control, its device queue holds 1 packet, and the
// qdisc installed on it holds the rest; the counters then come from the qdisc's Stats.
// Every point-to-point rate is raised by (pkt + 2) / pkt, so that a pkt_bytes-byte IP packet (plus
// PPP's 2 bytes) takes pkt_bytes x 8 / rate on the wire, as in ns-2 and our engine.
//
// It returns the records that sweeps/backends/records.py reads (its docstring lists them).
// Followed: ns-3 3.44's headers as installed by the wheel (tcp-socket-base.h, tcp-socket-state.h,
// point-to-point-helper.h, bulk-send-application.h, packet-sink.h) and the attribute and trace
// source names that TypeId reports at run time (TcpSocketBase: CongestionWindow, CongState, Tx,
// Retransmission; Queue: Enqueue, Dequeue, Drop; QueueDisc: PacketsInQueue, SojournTime, and
// Stats, whose drop reasons name the overflow drops: traffic-control/model/queue-disc.h and each
// discipline's OVERLIMIT_DROP).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace bsw
{
using namespace ns3;

struct Params
{
    std::string socketType; // ns3::TcpNewReno, ns3::TcpCubic, ...
    std::vector<std::string> flowSocketTypes; // per flow, for a tcp_mix (empty: socketType for all)
    std::string recoveryType;                 // ns3::TcpClassicRecovery or ns3::TcpPrrRecovery
    bool sack;
    uint32_t flows;
    uint32_t bufferPkts;
    uint32_t wmaxPkts;
    double coreMbps;
    double accessMbps; // 0: no access-link bottleneck
    uint32_t accessBufferPkts;
    uint32_t pktBytes;
    uint32_t segmentBytes; // TCP payload: pkt_bytes - 40 (IP + TCP) - 12 (timestamp option)
    double durationS;
    double warmupS;
    double sampleIntervalS;
    uint32_t seed;
    double initCwndPkts;
    double initSsthreshPkts; // 0: ns-3's default (unbounded)
    double minRtoMs;
    double tickMs;
    double connTimeoutS;
    bool delayedAck;
    double delackMs;
    bool limitedTransmit;
    bool ecn;                                  // TcpSocketBase::UseEcn On
    std::string qdisc;                         // "": the device's DropTailQueue (queue=droptail)
    std::vector<std::string> qdiscAttrNames;   // the qdisc's attributes, set as defaults
    std::vector<std::string> qdiscAttrValues;
    uint32_t quantumBytes;                     // FqCoDel's quantum (0: not FqCoDel)
    std::vector<std::string> lawAttrNames;     // the laws' attributes (ns3::Type::Name), set as defaults
    std::vector<std::string> lawAttrValues;
    std::vector<double> rttsMs;
    std::vector<double> startsS;
};

struct FlowStats
{
    bool started = false;
    uint32_t cwndBytes = 0;
    uint32_t ssthreshBytes = UINT32_MAX;
    uint64_t sentPkts = 0;
    uint64_t rexmitPkts = 0;
    uint64_t recoveries = 0;
    uint64_t timeouts = 0;
    uint64_t ecnCuts = 0;
};

struct State
{
    Params p;
    std::vector<FlowStats> flows;
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<Ptr<BulkSendApplication>> apps;
    Ptr<Queue<Packet>> queue;
    Ptr<QueueDisc> qdisc; // null with droptail
    double sojournSumS = 0;
    uint64_t sojournN = 0;
    uint64_t enqueued = 0, dequeued = 0, drops = 0;
    double qsum = 0, qLastS = 0;
    uint32_t qLevel = 0;
    uint32_t sampleK = 0;
    std::ostringstream out;
};

static State* g = nullptr;

static void
QueueChanged()
{
    double now = Simulator::Now().GetSeconds();
    g->qsum += g->qLevel * (now - g->qLastS);
    g->qLastS = now;
    g->qLevel = g->qdisc ? g->qdisc->GetNPackets() : g->queue->GetNPackets();
}

static void OnQdiscLevel(uint32_t, uint32_t) { QueueChanged(); }

static void
OnSojourn(Time t)
{
    g->sojournSumS += t.GetSeconds();
    g->sojournN++;
}

static void OnEnqueue(Ptr<const Packet>) { g->enqueued++; QueueChanged(); }
static void OnDequeue(Ptr<const Packet>) { g->dequeued++; QueueChanged(); }
static void OnDrop(Ptr<const Packet>) { g->drops++; }

static void OnCwnd(uint32_t i, uint32_t, uint32_t w) { g->flows[i].cwndBytes = w; }
static void OnSsthresh(uint32_t i, uint32_t, uint32_t s) { g->flows[i].ssthreshBytes = s; }

static void
OnCongState(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_RECOVERY)
        g->flows[i].recoveries++;
    else if (now == TcpSocketState::CA_LOSS)
        g->flows[i].timeouts++;
    else if (now == TcpSocketState::CA_CWR)
        g->flows[i].ecnCuts++; // ns-3 enters CWR on an ECN-Echo only
}

static void
OnTx(uint32_t i, Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0)
        g->flows[i].sentPkts++;
}

static void
OnRetransmission(uint32_t i, Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                 Ptr<const TcpSocketBase>)
{
    g->flows[i].rexmitPkts++;
}

// BulkSendApplication creates its socket when it starts: hook the traces just after.
static void
HookFlow(uint32_t i)
{
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(g->apps[i]->GetSocket());
    g->flows[i].started = true;
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, i));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsthresh, i));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, i));
    s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnRetransmission, i));
}

static uint64_t
ReceivedPkts(uint32_t i)
{
    return g->sinks[i]->GetTotalRx() / g->p.segmentBytes;
}

// Drops at the qdisc's limit (the rest are its early drops): the reasons ns-3 3.44 gives them.
static uint64_t
OverflowDrops(const QueueDisc::Stats& st)
{
    uint64_t n = 0;
    for (const auto* m : {&st.nDroppedPacketsBeforeEnqueue, &st.nDroppedPacketsAfterDequeue})
        for (const auto& [reason, count] : *m)
            if (reason.find("Overlimit drop") != std::string::npos ||
                reason.find(QueueDisc::INTERNAL_QUEUE_DROP) != std::string::npos)
                n += count;
    return n;
}

static std::string
QdiscCounters()
{
    const QueueDisc::Stats& st = g->qdisc->GetStats();
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "departures %llu arrivals %llu drops %llu qsum %.9g marks %llu early_drops %llu "
                  "sojourn_sum %.9g sojourn_n %llu",
                  (unsigned long long)st.nTotalSentPackets, (unsigned long long)st.nTotalReceivedPackets,
                  (unsigned long long)st.nTotalDroppedPackets, g->qsum, (unsigned long long)st.nTotalMarkedPackets,
                  (unsigned long long)(st.nTotalDroppedPackets - OverflowDrops(st)), g->sojournSumS,
                  (unsigned long long)g->sojournN);
    return buf;
}

static std::string
Counters()
{
    QueueChanged(); // closes the queue integral at now
    if (g->qdisc)
        return QdiscCounters();
    char buf[200];
    std::snprintf(buf, sizeof buf, "departures %llu arrivals %llu drops %llu qsum %.9g",
                  (unsigned long long)g->dequeued, (unsigned long long)(g->enqueued + g->drops),
                  (unsigned long long)g->drops, g->qsum);
    return buf;
}

static void
Totals(std::string tag)
{
    g->out << tag << " " << Counters() << " short_started 0 short_done 0\n";
    for (uint32_t i = 0; i < g->p.flows; i++)
    {
        const FlowStats& f = g->flows[i];
        g->out << "flow id " << i << " at " << tag << " acked " << ReceivedPkts(i) << " rexmit_pkts "
               << f.rexmitPkts << " timeouts " << f.timeouts << " cwnd_cuts " << f.recoveries + f.timeouts
               << " sent_pkts " << f.sentPkts;
        if (g->p.ecn)
            g->out << " ecn_cuts " << f.ecnCuts;
        g->out << "\n";
    }
}

static void
Sample()
{
    g->sampleK++;
    uint64_t acked = 0, started = 0, ca = 0;
    double cwnd = 0;
    for (uint32_t i = 0; i < g->p.flows; i++)
    {
        const FlowStats& f = g->flows[i];
        acked += ReceivedPkts(i);
        if (!f.started)
            continue;
        started++;
        cwnd += double(f.cwndBytes) / g->p.segmentBytes;
        ca += f.cwndBytes >= f.ssthreshBytes;
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "sample time_s %.9g ", Simulator::Now().GetSeconds());
    g->out << buf << Counters() << " acked " << acked;
    std::snprintf(buf, sizeof buf, " cwnd_sum %.9g started %llu ca %llu\n", cwnd, (unsigned long long)started,
                  (unsigned long long)ca);
    g->out << buf;
    double next = (g->sampleK + 1) * g->p.sampleIntervalS;
    if (next <= g->p.durationS + 1e-9)
        Simulator::Schedule(Seconds(next) - Simulator::Now(), &Sample);
}

static std::string
Rate(double mbps, const Params& p)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0fbps", mbps * 1e6 * (p.pktBytes + 2) / p.pktBytes);
    return buf;
}

static std::string
Pkts(uint32_t n)
{
    return std::to_string(n) + "p";
}

static void
SetTcpDefaults(const Params& p)
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(p.socketType)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TypeId::LookupByName(p.recoveryType)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(p.sack));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(p.minRtoMs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(p.tickMs)));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(p.limitedTransmit));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(p.segmentBytes));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(uint32_t(p.initCwndPkts)));
    if (p.initSsthreshPkts > 0)
        Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold",
                           UintegerValue(uint32_t(p.initSsthreshPkts * p.segmentBytes)));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(p.delayedAck ? 2 : 1));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(p.delackMs)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(p.connTimeoutS)));
    // The window cap: the receiver advertises at most wmax segments, and the sender holds as many.
    uint32_t cap = p.wmaxPkts * p.segmentBytes;
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(cap));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(cap));
    // Linux 2.6's CUBIC, as our `cubic_2622` preset: no HyStart.
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));
    for (size_t i = 0; i < p.lawAttrNames.size(); i++)
        Config::SetDefault(p.lawAttrNames[i], StringValue(p.lawAttrValues[i]));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(p.ecn ? "On" : "Off"));
}

// A buffer of n packets (ours and ns-2's count the one being transmitted) as a device queue's
// MaxSize, which counts only those waiting; at least 1.
static uint32_t
Waiting(uint32_t n)
{
    return n > 1 ? n - 1 : 1;
}

// The bottleneck's qdisc on r0's device; the reverse (ACK) direction keeps none.
static void
InstallQdisc(const Params& p, NetDeviceContainer& coreDevs)
{
    TrafficControlHelper().Uninstall(coreDevs); // the FqCoDel that Ipv4AddressHelper::Assign put there
    for (size_t i = 0; i < p.qdiscAttrNames.size(); i++)
    {
        const std::string& name = p.qdiscAttrNames[i]; // relative to the qdisc, or a full ns3:: path
        Config::SetDefault(name.rfind("ns3::", 0) == 0 ? name : p.qdisc + "::" + name,
                           StringValue(p.qdiscAttrValues[i]));
    }
    TrafficControlHelper tch;
    tch.SetRootQueueDisc(p.qdisc);
    g->qdisc = tch.Install(coreDevs.Get(0)).Get(0);
    if (p.quantumBytes > 0)
        DynamicCast<FqCoDelQueueDisc>(g->qdisc)->SetQuantum(p.quantumBytes);
    g->qdisc->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnQdiscLevel));
    g->qdisc->TraceConnectWithoutContext("SojournTime", MakeCallback(&OnSojourn));
}

static void
BuildDumbbell(const Params& p, NodeContainer& senders, Ptr<Node>& receiver, std::vector<Ipv4Address>& sinkAddrs)
{
    NodeContainer routers(2);
    senders.Create(p.flows);
    receiver = CreateObject<Node>();
    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receiver);
    Ipv4AddressGenerator::Reset();
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    std::string big = Pkts(1000000);

    PointToPointHelper core;
    if (p.qdisc.empty())
        core.DisableFlowControl();
    core.SetDeviceAttribute("DataRate", StringValue(Rate(p.coreMbps, p)));
    core.SetChannelAttribute("Delay", StringValue("0s"));
    core.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(big)));
    NetDeviceContainer coreDevs = core.Install(routers.Get(0), routers.Get(1));
    g->queue = DynamicCast<PointToPointNetDevice>(coreDevs.Get(0))->GetQueue();
    // The device dequeues the packet it transmits, so MaxSize waits beside it: buffer_pkts - 1.
    g->queue->SetMaxSize(QueueSize(Pkts(p.qdisc.empty() ? Waiting(p.bufferPkts) : 1)));
    addr.Assign(coreDevs);
    addr.NewNetwork();
    if (!p.qdisc.empty())
        InstallQdisc(p, coreDevs);

    PointToPointHelper out;
    out.DisableFlowControl();
    out.SetDeviceAttribute("DataRate", StringValue("100Gbps"));
    out.SetChannelAttribute("Delay", StringValue("0s"));
    out.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(big)));
    Ipv4InterfaceContainer rx = addr.Assign(out.Install(routers.Get(1), receiver));
    addr.NewNetwork();
    for (uint32_t i = 0; i < p.flows; i++)
    {
        PointToPointHelper access;
        access.DisableFlowControl();
        access.SetDeviceAttribute("DataRate", StringValue(p.accessMbps > 0 ? Rate(p.accessMbps, p) : "100Gbps"));
        char delay[64];
        std::snprintf(delay, sizeof delay, "%.0fns", p.rttsMs[i] / 2 * 1e6);
        access.SetChannelAttribute("Delay", StringValue(delay));
        access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(big)));
        NetDeviceContainer d = access.Install(senders.Get(i), routers.Get(0));
        if (p.accessMbps > 0)
            DynamicCast<PointToPointNetDevice>(d.Get(0))->GetQueue()->SetMaxSize(QueueSize(Pkts(Waiting(p.accessBufferPkts))));
        addr.Assign(d);
        addr.NewNetwork();
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    sinkAddrs.assign(p.flows, rx.GetAddress(1));
    for (size_t i = 0; i < p.flowSocketTypes.size(); i++) // a tcp_mix: each sender's own law
        senders.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute(
            "SocketType",
            TypeIdValue(TypeId::LookupByName(p.flowSocketTypes[i])));
}

static void
InstallFlows(const Params& p, NodeContainer& senders, Ptr<Node> receiver, const std::vector<Ipv4Address>& sinkAddrs)
{
    for (uint32_t i = 0; i < p.flows; i++)
    {
        uint16_t port = 5000 + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkHelper.Install(receiver);
        s.Start(Seconds(0));
        g->sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(sinkAddrs[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(p.segmentBytes));
        ApplicationContainer a = bulk.Install(senders.Get(i));
        a.Start(Seconds(p.startsS[i]));
        g->apps.push_back(DynamicCast<BulkSendApplication>(a.Get(0)));
        Simulator::Schedule(Seconds(p.startsS[i]) + NanoSeconds(1), &HookFlow, i);
    }
}

std::string
Run(const Params& p)
{
    State state;
    state.p = p;
    state.flows.resize(p.flows);
    g = &state;
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(p.seed);
    // Random variables take stream numbers from a process-wide counter: reset it, so that a run's
    // draws (RED's, PIE's, ...) depend on its seed, not on the runs this process did before.
    RngSeedManager::ResetNextStreamIndex();
    SetTcpDefaults(p);
    NodeContainer senders;
    Ptr<Node> receiver;
    std::vector<Ipv4Address> sinkAddrs;
    BuildDumbbell(p, senders, receiver, sinkAddrs);
    InstallFlows(p, senders, receiver, sinkAddrs);
    if (!g->qdisc)
    {
        g->queue->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnEnqueue));
        g->queue->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnDequeue));
        g->queue->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
    }
    Simulator::Schedule(Seconds(p.warmupS), &Totals, std::string("warm"));
    if (p.sampleIntervalS > 0)
        Simulator::Schedule(Seconds(p.sampleIntervalS), &Sample);
    Simulator::Stop(Seconds(p.durationS) + NanoSeconds(1)); // after the last sample
    Simulator::Run();
    Totals("end");
    g->out << "held pkts " << (g->qdisc ? g->qdisc->GetNPackets() : g->queue->GetNPackets()) << "\n";
    std::string records = g->out.str();
    Simulator::Destroy();
    g = nullptr;
    return records;
}

} // namespace bsw
