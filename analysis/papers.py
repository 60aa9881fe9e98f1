"""Numbers published in the papers (docs/reproductions.md, "Papers"), for reports to set beside ours."""

# Dick (2005), 45 Mb/s, RTT about 100 ms: (flows, x RTT*C/sqrt(N)) -> (buffer pkts, Reno, NewReno)
DICK_TABLE: dict[tuple[int, float], tuple[int, float, float]] = {
    (30, 0.5): (51, 0.821, 0.900),
    (30, 1.0): (103, 0.896, 0.923),
    (30, 2.0): (205, 0.947, 0.966),
    (30, 3.0): (308, 0.977, 0.988),
    (60, 0.5): (36, 0.805, 0.862),
    (60, 1.0): (73, 0.919, 0.948),
    (60, 2.0): (145, 0.921, 0.957),
    (60, 3.0): (218, 0.968, 0.985),
    (90, 0.5): (30, 0.820, 0.868),
    (90, 1.0): (59, 0.950, 0.969),
    (90, 2.0): (119, 0.920, 0.962),
    (90, 3.0): (178, 0.905, 0.980),
    (120, 0.5): (26, 0.814, 0.883),
    (120, 1.0): (51, 0.955, 0.973),
    (120, 2.0): (103, 0.915, 0.982),
    (120, 3.0): (154, 0.876, 0.979),
}

# Enachescu et al. (2006), Fig. 1: the maximum offered load per number of flows, and the
# text's statements: Reno with 40 flows needs about 100 packets for 80%; paced 80% with 10.
ENACHESCU_FIG1_MAX_LOAD = {1: 0.026, 10: 0.26, 20: 0.52, 40: 1.0}
ENACHESCU_FIG1_RENO_40_BUFFER_FOR_80 = 100
ENACHESCU_FIG1_PACED_40_AT_10 = 0.80

# Fig. 2(a): 80% peak load, buffer 10: paced about 70%, Reno about 20%, for 1 to 1,000 flows.
ENACHESCU_FIG2A = {"paced": 0.70, "reno": 0.20}

# Fig. 2(b): paced, 100 Mb/s: 20 flows about 50%, 40 flows 80-90%, 100 and 200 flows >= 80%
# with 10-packet buffers.
ENACHESCU_FIG2B_AT_10 = {20: (0.45, 0.55), 40: (0.80, 0.90), 100: (0.80, 1.0), 200: (0.80, 1.0)}

# Fig. 3(b): N = 10, peak load a little over 50%: about 50% with log-sized buffers for every
# Wmax (10 to 1529), dropping significantly with a constant 5-packet buffer.
ENACHESCU_FIG3B_LOG = 0.50

# Zhang and Loguinov (2010), ABS Tables 2 and 3: per policy, (b pkts, p %, u %). Table 2 varies N
# at C = 16 Mb/s (its header says 10; the text and the N = 16 row, equal to Table 3's C = 16 row,
# say 16); Table 3 varies C (Mb/s) with N = 16. u* = 98%, p* = 2%; RTTs uniform in [30, 30 + 2N] ms.
ABS_POLICIES = ("bdp", "stanford", "bscl", "abs")
ABS_TABLE2: dict[int, dict[str, tuple[float, float, float]]] = {
    2: {"bdp": (110, 0.08, 94.3), "stanford": (155, 0.06, 95.8), "bscl": (55, 0.11, 89.6), "abs": (287, 0.03, 97.9)},
    4: {"bdp": (116, 0.18, 94.3), "stanford": (116, 0.18, 94.3), "bscl": (47, 0.32, 85.5), "abs": (232, 0.09, 97.8)},
    8: {"bdp": (128, 0.42, 93.5), "stanford": (91, 0.55, 88.5), "bscl": (45, 0.83, 78.6), "abs": (229, 0.23, 97.9)},
    16: {"bdp": (150, 1.05, 94.9), "stanford": (75, 1.6, 87.8), "bscl": (45, 1.8, 83.4), "abs": (227, 0.74, 97.9)},
    32: {"bdp": (190, 1.76, 98.3), "stanford": (68, 2.88, 92.8), "bscl": (45, 3.24, 89.8), "abs": (151, 2.04, 97.9)},
    64: {"bdp": (261, 2.76, 99.9), "stanford": (66, 4.85, 95.8), "bscl": (94, 4.51, 97.6), "abs": (443, 2.00, 100.0)},
    128: {
        "bdp": (383, 4.06, 100.0),
        "stanford": (68, 7.08, 97.5),
        "bscl": (358, 4.18, 100.0),
        "abs": (941, 2.05, 100.0),
    },
    256: {
        "bdp": (595, 5.11, 100.0),
        "stanford": (75, 9.38, 98.8),
        "bscl": (922, 4.24, 100.0),
        "abs": (2006, 2.03, 100.0),
    },
    512: {
        "bdp": (965, 5.69, 100.0),
        "stanford": (86, 11.42, 99.8),
        "bscl": (2106, 4.19, 100.0),
        "abs": (4210, 2.00, 100.0),
    },
    1024: {
        "bdp": (1618, 6.47, 100.0),
        "stanford": (102, 13.45, 100.0),
        "bscl": (4569, 3.94, 100.0),
        "abs": (8613, 2.03, 100.0),
    },
}
ABS_TABLE3: dict[int, dict[str, tuple[float, float, float]]] = {
    2: {"bdp": (19, 9.7, 99.2), "stanford": (10, 12.7, 97.5), "bscl": (76, 3.7, 99.9), "abs": (148, 2.08, 99.9)},
    4: {"bdp": (38, 4.8, 98.4), "stanford": (19, 6.6, 95.1), "bscl": (53, 4.0, 99.1), "abs": (131, 2.03, 99.7)},
    8: {"bdp": (75, 2.4, 96.1), "stanford": (38, 3.03, 91.9), "bscl": (17, 4.3, 79.5), "abs": (120, 1.85, 97.9)},
    16: {"bdp": (150, 1.05, 94.9), "stanford": (75, 1.6, 87.8), "bscl": (45, 1.8, 83.4), "abs": (227, 0.74, 97.9)},
    32: {"bdp": (300, 0.4, 97.3), "stanford": (150, 0.6, 91.2), "bscl": (100, 0.8, 86.2), "abs": (333, 0.35, 97.9)},
    64: {"bdp": (600, 0.13, 98.5), "stanford": (300, 0.2, 94.3), "bscl": (211, 0.3, 90.9), "abs": (496, 0.15, 97.9)},
    128: {
        "bdp": (1200, 0.05, 99.2),
        "stanford": (600, 0.08, 96.4),
        "bscl": (432, 0.09, 93.0),
        "abs": (780, 0.06, 97.8),
    },
    256: {
        "bdp": (2400, 0.021, 99.4),
        "stanford": (1200, 0.03, 98.1),
        "bscl": (875, 0.04, 95.2),
        "abs": (1164, 0.028, 97.9),
    },
    512: {
        "bdp": (4799, 0.003, 99.6),
        "stanford": (2400, 0.008, 98.6),
        "bscl": (1760, 0.01, 97.7),
        "abs": (1759, 0.012, 98.1),
    },
    1024: {
        "bdp": (9597, 0.0003, 99.6),
        "stanford": (4799, 0.0007, 98.2),
        "bscl": (3531, 0.0009, 96.6),
        "abs": (3860, 0.0008, 97.9),
    },
}

# ABS Figs. 2 and 3 (10 Mb/s, 20 flows, I_u = I_p = 3000, T = 200 ms): without training, (u*, p*) =
# (95%, 0.5%) is stable near 1200 packets and (70%, 5%) oscillates between about 1 and 2700; with
# training both converge.
ABS_FIG2_STABLE_PKTS = 1200
ABS_FIG2_OSCILLATION_PKTS = (1, 2700)
# The targets of ABS's tables (section 4.2) and figures (sections 4.3-4.7), as (u*, p*); Fig. 9 per link.
ABS_TABLE_TARGETS = (0.98, 0.02)
ABS_FIG_TARGETS = {
    "abs_fig4": (0.90, 0.02),
    "abs_fig5": (0.90, 0.02),
    "abs_fig6": (0.90, 0.02),
    "abs_fig7": (0.90, 0.02),
    "abs_fig8": (0.90, 0.02),
}
ABS_FIG9_TARGETS = {0: (0.95, 0.01), 1: (0.75, 0.05)}
# Fig. 4: 20 of 60 flows leave at 48 s and 20 more at 96 s; they return at 144 s and 192 s.
ABS_FIG4_LOAD_STEPS_S = (48.0, 96.0, 144.0, 192.0)
# Fig. 5: the buffer fluctuates between about 40 and 100 packets.
ABS_FIG5_BUFFER_PKTS = (40, 100)
# Fig. 6: the memory bound, (from time s, packets).
ABS_FIG6_MEMORY_BOUNDS = ((0.0, 100.0), (250.0, 50.0), (500.0, 150.0), (750.0, 80.0), (1000.0, 60.0))

# The delay targets of the AQM RFCs (their defaults): CoDel 5 ms (RFC 8289 section 4.4 and the
# pseudocode's TARGET), FQ-CoDel's per-queue CoDel 5 ms (RFC 8290 section 5.2.3), PIE 15 ms
# (RFC 8033 section 4.1 QDELAY_REF). RED has no delay target.
AQM_TARGET_MS = {"codel": 5.0, "pie": 15.0, "fq_codel": 5.0}

# RED's parameters: Floyd and Jacobson (1993) simulate max_p = 0.02 and w_q = 0.002 and ask for
# max_th >= 2 min_th; Floyd's 1997 note ("RED: Discussions of Setting Parameters") sets max_th =
# 3 min_th and max_p = 0.1, as ns-2's default then became. Nichols and Jacobson (2012, Fig. 5):
# at 10 Mb/s and above RED's delays and utilizations are smaller than CoDel's ("likely
# overcontrolling").
RED_FJ93 = {"max_p": 0.02, "w_q": 0.002, "max_th_over_min_th": 2.0}
RED_FLOYD97 = {"max_p": 0.1, "max_th_over_min_th": 3.0}

# Issue 33. The BBR papers give their results as plots; the reports test these claims (no number is
# read off a plot):
# - Hock, Bless and Zitterbart, "Experimental Evaluation of BBR Congestion Control" (ICNP 2017), and
#   Scholz et al., "Towards a Deeper Understanding of TCP BBR Congestion Control" (IFIP Networking
#   2018): one BBR flow takes most of the link from CUBIC in buffers below about a BDP, and CUBIC
#   takes more as the buffer grows, most of it in deep (8-16 BDP) buffers.
# - Ware et al., "Modeling BBR's Interactions with Loss-Based Congestion Control" (IMC 2019): BBR's
#   share is largely independent of the number of loss-based flows it competes with.
BBR_MAJORITY = 0.5
"""'Most of the link': more than this share."""
BBR_SHALLOW_MAX_BDP = 1.0
"""'Shallow' buffers, in BDP: BBR takes most of the link at and below this."""
BBR_DEEP_MIN_BDP = 8.0
"""'Deep' buffers, in BDP: CUBIC takes most of the link at and above this."""
BBR_N_INDEPENDENT_TOL = 0.15
"""'Largely independent of N': BBR's share against 1 and against 16 CUBIC flows within this."""
# The single-flow buffer rule: a flow whose window falls to beta x cwnd at a loss keeps the link
# busy iff the buffer holds (1 - beta) / beta x BDP (the classic 1 BDP for Reno's 0.5).
SINGLE_FLOW_BETA = {"sack": 0.5, "cubic_rfc9438": 0.7, "cubic_2622": 819 / 1024}
# Hock, Bless and Zitterbart (ICNP 2017) give BBR's losses in shallow buffers and its standing queue
# in deep ones as plots; the report tests two claims, with its own thresholds (none read off a plot):
# - several BBR flows lose more than loss-based (CUBIC) flows do in the same shallow buffer (the
#   abstract's "massive packet loss");
# - with several flows, each flow's inflight cap (cwnd_gain 2 x its BDP estimate) lets about one
#   BDP of queue stand in a buffer that holds it (section IV).
BBR_SHALLOW_LOSS_MAX_BDP = 0.5
"""'Shallow' for the loss claim, in BDP: BBR's loss rate is compared with CUBIC's at and below this."""
BBR_STANDING_QUEUE_BDP = 1.0
"""The standing queue several BBR flows keep in a deep buffer, in BDP (cwnd_gain 2 less the BDP)."""
BBR_STANDING_QUEUE_TOL = 0.3
"""'Near one BDP': the mean queue within this many BDPs of it."""
# Alizadeh et al., "Data Center TCP (DCTCP)" (SIGCOMM 2010):
# - section 3.4, Eq. (13): no throughput is lost if the marking threshold K > C x RTT / 7
#   (C in packets/s, RTT in s, K in packets); Eq. (10): the queue peaks at K + N with N flows;
# - section 3.5: K = 20 packets at 1 Gb/s and 65 at 10 Gb/s in their experiments (above the rule's
#   20 at 10 Gb/s because the hosts' 30-40-packet bursts needed it);
# - section 4.1, Fig. 14 (10 Gb/s): once K exceeds 65 DCTCP's throughput equals TCP's; at 1 Gb/s it
#   is insensitive to K "even for values as low as K=5";
# - section 4.1, Fig. 13 (1 Gb/s, 2 flows, K = 20): DCTCP's queue stable around K + n = 20 packets,
#   TCP's (drop-tail) "10X larger".
DCTCP_K_RULE_DIVISOR = 7
DCTCP_K_USED_PKTS = {1000.0: 20, 10000.0: 65}
"""Section 3.5: the K of their experiments, by link rate in Mb/s."""
DCTCP_K_MIN_1G = 5
"""Section 4.1: at 1 Gb/s DCTCP keeps its throughput with K as low as this."""
DCTCP_TCP_QUEUE_RATIO = 10.0
"""Section 4.1, Fig. 13: drop-tail TCP's queue over DCTCP's at 1 Gb/s, K = 20."""
DCTCP_FULL_UTILIZATION = 0.95
"""'Full throughput': the paper's 0.95 Gb/s of 1 Gb/s (section 4.1)."""
