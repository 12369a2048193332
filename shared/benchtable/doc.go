// Command benchtable runs the benchmark workloads listed in a workloads file and prints one
// table: workload, rate, p50/p99, peak RSS and, for workloads that name a peer size, the
// ratio to the raw-SQL floor and to River run side by side in the same invocation
// (docs/performance.md#make-bench). Usage (make bench):
//
//	go run ./shared/benchtable -workloads testdata/bench/workloads.txt -peers ../shared/bench -log bench.log
//
// A workloads line is "name | go package | benchmark regexp | test args | peer rows", "|"
// separated, ${VAR} expanded from the environment; blank lines and lines starting with #
// are skipped. Each benchmark result line becomes a table row. A benchmark reports its
// figures with testing.B.ReportMetric in readable units: a rate ("rows/s", "events/s", …;
// "rows/s" wins when several are reported, the rest are listed as stage rates), latency
// percentiles ("p50-ms", "p99-ms", or with a suffix such as "p99-ms/batch"; a second
// pair, "p50-ms/inbox" after "p50-ms/attribute", is listed with the stages) and
// "peak-rss-MiB". When the peers directory (floor, riverpeer: separate Go modules) is
// absent, the table says so and has no ratio columns.
package main
