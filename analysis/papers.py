"""Numbers published in the papers (../shared/seeds), for reports to set beside ours."""

# Dick (2005), 45 Mb/s, RTT about 100 ms: (flows, x RTT*C/sqrt(N)) -> (buffer pkts, Reno, NewReno)
DICK_TABLE: dict[tuple[int, float], tuple[int, float, float]] = {
    (30, 0.5): (51, 0.821, 0.900), (30, 1.0): (103, 0.896, 0.923),
    (30, 2.0): (205, 0.947, 0.966), (30, 3.0): (308, 0.977, 0.988),
    (60, 0.5): (36, 0.805, 0.862), (60, 1.0): (73, 0.919, 0.948),
    (60, 2.0): (145, 0.921, 0.957), (60, 3.0): (218, 0.968, 0.985),
    (90, 0.5): (30, 0.820, 0.868), (90, 1.0): (59, 0.950, 0.969),
    (90, 2.0): (119, 0.920, 0.962), (90, 3.0): (178, 0.905, 0.980),
    (120, 0.5): (26, 0.814, 0.883), (120, 1.0): (51, 0.955, 0.973),
    (120, 2.0): (103, 0.915, 0.982), (120, 3.0): (154, 0.876, 0.979),
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
