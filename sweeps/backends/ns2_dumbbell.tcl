# buffersweep's dumbbell in ns-2 (2.35), for the ns2 backend (sweeps/backends/ns2.py): N one-way
# TCP agents with the RTTs and start times the backend passes (our engine's draws for the seed;
# without them, RTTs uniform in rtt_ms +/- rtt_spread_ms/2), all through one DropTail or RED bottleneck.
# The backend passes "key value" pairs named as SimConfig's fields and reads the file `out`.
# The agent is Agent/TCP/<agent>; for agent Linux (TCP-Linux, Linux 2.6.22.6's congestion modules)
# `select_ca ca` picks the module. The receiver is Agent/<sink>.
#
# `out` gets the records that sweeps/backends/records.py reads (its docstring lists them).
set opt(ca) none
set opt(timestamps) 0
# Optional: the long flows' RTTs (ms) and start times (s), one per flow, so that ns-2 runs the very
# flows our engine drew for the same seed; without them ns-2 draws its own.
set opt(flow_rtts_ms) {}
set opt(flow_starts_s) {}
set opt(sample_interval_s) 0
set opt(queue) droptail
foreach {k v} $argv { set opt($k) $v }
set N $opt(flows)
# One-way TCP adds a 40-byte header to packetSize_, so the wire size matches pkt_bytes.
Agent/TCP set packetSize_ [expr $opt(pkt_bytes) - 40]
Agent/TCP set window_ $opt(wmax_pkts)
Agent/TCP set maxcwnd_ 0
Agent/TCP set windowInit_ $opt(init_cwnd_pkts)
Agent/TCP set minrto_ [expr $opt(min_rto_ms) / 1000.0]
Agent/TCP set maxrto_ $opt(max_rto_s)
Agent/TCP set rtxcur_init_ $opt(init_rto_s)
Agent/TCP set tcpTick_ [expr $opt(tick_ms) / 1000.0]
Agent/TCP set singledup_ $opt(limited_transmit)
Agent/TCP set maxburst_ $opt(max_burst_pkts)
# Send jitter: each send_much waits uniform(0, overhead_) s, then sends what the window allows.
Agent/TCP set overhead_ [expr $opt(send_jitter_ms) / 1000.0]
# RFC 1323 timestamps, for TCP-LP's one-way delay (TCP-Linux reads them on every ACK).
Agent/TCP set timestamps_ $opt(timestamps)
proc new_tcp {} {
  global opt
  set tcp [new Agent/TCP/$opt(agent)]
  if {$opt(ca) != "none"} { $tcp select_ca $opt(ca) }
  return $tcp
}
# Access links (access_mbps > 0): each source's own link at that rate with access_buffer_pkts of
# buffer, carrying the flow's propagation delay; otherwise effectively unlimited.
if {$opt(access_mbps) > 0} {
  set access_rate $opt(access_mbps)Mb
  set access_limit $opt(access_buffer_pkts)
} else {
  set access_rate 100Gb
  set access_limit 1000000
}

set ns [new Simulator]
set rng [new RNG]
$rng seed $opt(seed)
set r0 [$ns node]
set r1 [$ns node]
# Zero-delay bottleneck: each flow's whole propagation delay sits on its own fast access link.
# The bottleneck's discipline: DropTail, or RED with our `red` parameters (ns-2's queue/red.cc,
# which that discipline follows); drop-tail at the hard limit, no ECN marks.
set qtype DropTail
if {$opt(queue) eq "red"} {
  set qtype RED
  Queue/RED set thresh_ $opt(red_min_th)
  Queue/RED set maxthresh_ $opt(red_max_th)
  Queue/RED set linterm_ [expr 1.0 / $opt(red_max_p)]
  Queue/RED set q_weight_ $opt(red_w_q)
  Queue/RED set gentle_ $opt(red_gentle)
  Queue/RED set wait_ $opt(red_wait)
  Queue/RED set bytes_ $opt(red_bytes)
  Queue/RED set queue_in_bytes_ $opt(red_bytes)
  Queue/RED set mean_pktsize_ [expr {$opt(red_mean_pkt_bytes) > 0 ? $opt(red_mean_pkt_bytes) : $opt(pkt_bytes)}]
  Queue/RED set setbit_ false
  Queue/RED set drop_tail_ true
}
$ns simplex-link $r0 $r1 $opt(core_mbps)Mb 0ms $qtype
$ns simplex-link $r1 $r0 $opt(core_mbps)Mb 0ms DropTail
$ns queue-limit $r0 $r1 $opt(buffer_pkts)
if {$qtype eq "RED"} {
  # The idle-time correction's packet rate (ptc) comes from the link's bandwidth.
  set bl [$ns link $r0 $r1]
  [$bl queue] link [$bl link]
}
$ns queue-limit $r1 $r0 1000000
set qm [$ns monitor-queue $r0 $r1 ""]
set qint [$qm get-pkts-integrator]
set tcps {}
set starts {}
for {set i 0} {$i < $N} {incr i} {
  set s [$ns node]
  set d [$ns node]
  set rtt [expr $opt(rtt_ms) + ([$rng uniform 0 1] - 0.5) * $opt(rtt_spread_ms)]
  if {[llength $opt(flow_rtts_ms)] == $N} { set rtt [lindex $opt(flow_rtts_ms) $i] }
  $ns duplex-link $s $r0 $access_rate [expr $rtt / 2.0]ms DropTail
  $ns queue-limit $s $r0 $access_limit
  $ns queue-limit $r0 $s 1000000
  $ns duplex-link $r1 $d 100Gb 0ms DropTail
  $ns queue-limit $r1 $d 1000000
  $ns queue-limit $d $r1 1000000
  set tcp [new_tcp]
  lappend tcps $tcp
  $ns attach-agent $s $tcp
  set sink [new Agent/$opt(sink)]
  $ns attach-agent $d $sink
  $ns connect $tcp $sink
  set ftp [new Application/FTP]
  $ftp attach-agent $tcp
  set start [expr [$rng uniform 0 1] * $opt(start_window_s)]
  if {[llength $opt(flow_starts_s)] == $N} { set start [lindex $opt(flow_starts_s) $i] }
  lappend starts $start
  $ns at $start "$ftp start"
}
# Short flows (short_mbps > 0): Poisson arrivals of short_flow_pkts-packet transfers from 50
# source nodes whose RTTs are drawn as the long flows'. Creating an agent pair per transfer
# would mean tens of thousands of agents, so pairs are pooled per node: a finished pair is reset
# and reused, 2 s after its transfer ended so that no late packet of it meets the next one.
set short_nodes 50
set short_started 0
set short_done 0
if {$opt(short_mbps) > 0} {
  set ds [$ns node]
  $ns duplex-link $r1 $ds 100Gb 0ms DropTail
  $ns queue-limit $r1 $ds 1000000
  $ns queue-limit $ds $r1 1000000
  for {set k 0} {$k < $short_nodes} {incr k} {
    set sn($k) [$ns node]
    set rtt [expr $opt(rtt_ms) + ([$rng uniform 0 1] - 0.5) * $opt(rtt_spread_ms)]
    $ns duplex-link $sn($k) $r0 100Gb [expr $rtt / 2.0]ms DropTail
    $ns queue-limit $sn($k) $r0 1000000
    $ns queue-limit $r0 $sn($k) 1000000
    set pool($k) {}
  }
  set short_gap_s [expr $opt(short_flow_pkts) * $opt(pkt_bytes) * 8.0 / ($opt(short_mbps) * 1e6)]
  proc short_arrival {} {
    global ns rng opt short_nodes sn ds pool short_gap_s short_started
    set k [expr int([$rng uniform 0 $short_nodes])]
    if {[llength $pool($k)] > 0} {
      lassign [lindex $pool($k) 0] tcp sink
      set pool($k) [lrange $pool($k) 1 end]
      $tcp reset
      $sink reset
    } else {
      set tcp [new_tcp]
      $ns attach-agent $sn($k) $tcp
      set sink [new Agent/$opt(sink)]
      $ns attach-agent $ds $sink
      $ns connect $tcp $sink
      $tcp proc done {} "short_finished $k $tcp $sink"
    }
    incr short_started
    # ns-2 sends sequence numbers 0..curseq_, so advanceby n sends n + 1 packets (measured).
    $tcp advanceby [expr $opt(short_flow_pkts) - 1]
    $ns at [expr [$ns now] + [$rng exponential $short_gap_s]] "short_arrival"
  }
  proc short_finished {k tcp sink} {
    global ns short_done
    incr short_done
    $ns at [expr [$ns now] + 2.0] "lappend pool($k) {$tcp $sink}"
  }
  $ns at [$rng exponential $short_gap_s] "short_arrival"
}
# Packets, not bytes: the queue monitor's byte counters are 32-bit ints that wrap after 2 GB
# (under 2 minutes at 400 Mb/s), while every data packet is pkt_bytes long.
set out [open $opt(out) w]
proc counters {} {
  global ns qm qint
  # The integrator adds the last level's area only when the level changes: close it at now.
  $qint newpoint [$ns now] [$qm set pkts_]
  return [format "departures %d arrivals %d drops %d qsum %.9g" \
    [$qm set pdepartures_] [$qm set parrivals_] [$qm set pdrops_] [$qint set sum_]]
}
proc flows_line {at} {
  global tcps out
  set i 0
  foreach tcp $tcps {
    # ack_ is the highest cumulative ACK, -1 before the first: ack_ + 1 packets are acknowledged.
    # TCP-Linux counts its window cuts (recoveries and timeouts) in ncwndcuts_ only; ns-2's own
    # agents count loss-driven cuts in ncwndcuts1_ (ncwndcuts_ adds idle restarts).
    set cuts [expr {[$tcp info class] eq "Agent/TCP/Linux" ? [$tcp set ncwndcuts_] : [$tcp set ncwndcuts1_]}]
    puts $out [format "flow id %d at %s acked %d rexmit_pkts %d timeouts %d cwnd_cuts %d sent_pkts %d" \
      $i $at [expr [$tcp set ack_] + 1] [$tcp set nrexmitpack_] [$tcp set nrexmit_] $cuts \
      [$tcp set ndatapack_]]
    incr i
  }
}
proc totals {tag} {
  global out short_started short_done
  puts $out "$tag [counters] short_started $short_started short_done $short_done"
  flows_line $tag
}
set sample_k 0
proc sample {} {
  global ns out tcps starts opt sample_k
  incr sample_k
  set now [$ns now]
  set acked 0
  set cwnd 0.0
  set started 0
  set ca 0
  foreach tcp $tcps start $starts {
    if {$start > $now} continue
    incr started
    set acked [expr $acked + [$tcp set ack_] + 1]
    set w [$tcp set cwnd_]
    set cwnd [expr $cwnd + $w]
    if {$w >= [$tcp set ssthresh_]} { incr ca }
  }
  puts $out [format "sample time_s %.9g %s acked %d cwnd_sum %.9g started %d ca %d" \
    $now [counters] $acked $cwnd $started $ca]
  # Sample k at k x interval (not a running sum, which would drift); the one at duration_s is
  # taken by finish, which ns-2 runs first among events at the same time (scheduled earlier).
  set next [expr ($sample_k + 1) * $opt(sample_interval_s)]
  if {$next < $opt(duration_s) - 1e-9} { $ns at $next "sample" }
}
proc finish {} {
  global out qm opt sample_k
  if {$opt(sample_interval_s) > 0 && ($sample_k + 1) * $opt(sample_interval_s) <= $opt(duration_s) + 1e-9} {
    sample
  }
  totals end
  puts $out "held pkts [$qm set pkts_]"
  close $out
  exit 0
}
$ns at $opt(warmup_s) "totals warm"
if {$opt(sample_interval_s) > 0} { $ns at $opt(sample_interval_s) "sample" }
$ns at $opt(duration_s) "finish"
$ns run
