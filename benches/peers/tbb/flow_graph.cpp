// The oneTBB flow-graph peer of `fugue bench overhead`.
//
// Reads a DAG exported by fugue (`fugue-dag 1`, then `TASKS EDGES`, then one `SRC DST` line
// per edge, task indices in topological order), builds a tbb::flow::graph with one
// continue_node per task (a broadcast_node feeds the sources), and runs it CYCLES times after
// WARMUP untimed cycles, timing each `try_put` + `wait_for_all`. Optionally sleeps IDLE_US
// between cycles.
//
// Each node does no work but checks the run, as fugue's probe nodes do: its own counter must
// be cycle - 1 (not run yet this cycle) and each predecessor's counter must already be cycle;
// then it stores cycle. After the last cycle every counter must equal the cycle. A failed
// check makes the output say "ok": false and the exit code 1.
//
// Usage: tbb-flow EDGES THREADS CYCLES WARMUP IDLE_US [PIN]
// PIN = 1 pins the thread of arena slot i to core i mod cores (the main thread takes slot 0),
// as `fugue bench overhead --pin` pins fugue's threads; otherwise (default) the process may
// run on every online core, whatever affinity it inherited.
// Prints one JSON object: executor, threads, nodes, cycles, median_ns, p99_ns, max_ns,
// min_ns, mean_ns, worker_share (the share of node runs, warm-up included, on threads other
// than the main one: 0 when oneTBB ran the graph alone on the calling thread), ok.
//
// Built by scripts/bench-peers.sh: g++ -O2 -std=c++17 flow_graph.cpp -ltbb.

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace flow = oneapi::tbb::flow;

namespace {

struct alignas(64) Counter {
    std::atomic<std::uint64_t> value{0};
    // Runs of this node on a thread other than the main one (written only by the thread
    // running the node, which the graph orders after the node's previous run).
    std::uint64_t off_main = 0;
};

thread_local bool is_main_thread = false;

struct Probe {
    std::atomic<std::uint64_t> cycle{0};
    std::vector<Counter> counters;
    std::vector<std::vector<std::uint32_t>> preds;
    std::atomic<std::uint64_t> errors{0};

    explicit Probe(std::size_t n) : counters(n), preds(n) {}

    // The executor (the flow graph) orders each predecessor's body before its successor's,
    // so relaxed loads see the predecessors' stores when the graph is correct.
    void run(std::uint32_t v) {
        const std::uint64_t c = cycle.load(std::memory_order_relaxed);
        bool ok = counters[v].value.load(std::memory_order_relaxed) + 1 == c;
        for (std::uint32_t p : preds[v]) {
            ok &= counters[p].value.load(std::memory_order_relaxed) == c;
        }
        if (!ok) {
            errors.fetch_add(1, std::memory_order_relaxed);
        }
        counters[v].value.store(c, std::memory_order_relaxed);
        if (!is_main_thread) {
            ++counters[v].off_main;
        }
    }
};

int online_cores() {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : static_cast<int>(n);
}

void set_affinity(int first, int count) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c = first; c < first + count; ++c) {
        CPU_SET(c, &set);
    }
    sched_setaffinity(0, sizeof set, &set);
}

// Pins every thread that enters the default arena to the core of its slot.
class Pinner : public oneapi::tbb::task_scheduler_observer {
public:
    Pinner() { observe(true); }
    ~Pinner() override { observe(false); }
    void on_scheduler_entry(bool) override {
        const int slot = oneapi::tbb::this_task_arena::current_thread_index();
        if (slot >= 0) {
            set_affinity(slot % online_cores(), 1);
        }
    }
};

[[noreturn]] void die(const std::string& msg) {
    std::fprintf(stderr, "tbb-flow: %s\n", msg.c_str());
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6 && argc != 7) {
        die("usage: tbb-flow EDGES THREADS CYCLES WARMUP IDLE_US [PIN]");
    }
    const bool pin = argc == 7 && std::atoi(argv[6]) != 0;
    const std::string path = argv[1];
    const int threads = std::atoi(argv[2]);
    const long cycles = std::atol(argv[3]);
    const long warmup = std::atol(argv[4]);
    const long idle_us = std::atol(argv[5]);
    if (threads < 1 || cycles < 1 || warmup < 0 || idle_us < 0) {
        die("THREADS and CYCLES must be at least 1, WARMUP and IDLE_US at least 0");
    }

    std::ifstream in(path);
    if (!in) {
        die("cannot read " + path);
    }
    std::string magic;
    int version = 0;
    std::size_t n = 0, m = 0;
    if (!(in >> magic >> version >> n >> m) || magic != "fugue-dag" || version != 1) {
        die(path + ": not a `fugue-dag 1` edge list");
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges(m);
    for (auto& e : edges) {
        if (!(in >> e.first >> e.second) || e.first >= n || e.second >= n || e.first >= e.second) {
            die(path + ": bad edge line (expected SRC < DST < TASKS)");
        }
    }

    // Every core first, whatever affinity was inherited: oneTBB sizes its pool from the
    // process's affinity mask when it starts (a mask of one core gives it no worker at all).
    // With PIN, each thread is then pinned to its slot's core as it enters the arena.
    set_affinity(0, online_cores());
    is_main_thread = true;
    std::unique_ptr<Pinner> pinner;
    if (pin) {
        pinner = std::make_unique<Pinner>();
    }
    oneapi::tbb::global_control limit(oneapi::tbb::global_control::max_allowed_parallelism,
                                      static_cast<std::size_t>(threads));
    Probe probe(n);
    std::vector<bool> has_pred(n, false);
    for (const auto& e : edges) {
        probe.preds[e.second].push_back(e.first);
        has_pred[e.second] = true;
    }

    flow::graph g;
    flow::broadcast_node<flow::continue_msg> start(g);
    std::vector<std::unique_ptr<flow::continue_node<flow::continue_msg>>> nodes;
    nodes.reserve(n);
    for (std::uint32_t v = 0; v < n; ++v) {
        nodes.push_back(std::make_unique<flow::continue_node<flow::continue_msg>>(
            g, [&probe, v](const flow::continue_msg&) {
                probe.run(v);
                return flow::continue_msg();
            }));
    }
    for (const auto& e : edges) {
        flow::make_edge(*nodes[e.first], *nodes[e.second]);
    }
    for (std::uint32_t v = 0; v < n; ++v) {
        if (!has_pred[v]) {
            flow::make_edge(start, *nodes[v]);
        }
    }

    std::vector<std::uint64_t> samples;
    samples.reserve(static_cast<std::size_t>(cycles));
    for (long i = 0; i < warmup + cycles; ++i) {
        if (idle_us > 0) {
            std::this_thread::sleep_for(std::chrono::microseconds(idle_us));
        }
        probe.cycle.fetch_add(1, std::memory_order_relaxed);
        const auto t0 = std::chrono::steady_clock::now();
        start.try_put(flow::continue_msg());
        g.wait_for_all();
        const auto t1 = std::chrono::steady_clock::now();
        if (i >= warmup) {
            samples.push_back(static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
        }
    }
    const std::uint64_t last = probe.cycle.load(std::memory_order_relaxed);
    for (std::size_t v = 0; v < n; ++v) {
        if (probe.counters[v].value.load(std::memory_order_relaxed) != last) {
            probe.errors.fetch_add(1, std::memory_order_relaxed);
        }
    }
    const bool ok = probe.errors.load() == 0;
    std::uint64_t off_main = 0;
    for (std::size_t v = 0; v < n; ++v) {
        off_main += probe.counters[v].off_main;
    }
    const double worker_share =
        static_cast<double>(off_main) / (static_cast<double>(n) * static_cast<double>(last));

    std::sort(samples.begin(), samples.end());
    const std::size_t k = samples.size();
    const double median = (k % 2 == 1) ? static_cast<double>(samples[k / 2])
                                       : (static_cast<double>(samples[k / 2 - 1]) +
                                          static_cast<double>(samples[k / 2])) / 2.0;
    std::size_t i99 = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(k)));
    i99 = std::min(std::max<std::size_t>(i99, 1), k) - 1;
    double sum = 0;
    for (auto s : samples) {
        sum += static_cast<double>(s);
    }
    std::printf(
        "{\"executor\":\"tbb\",\"threads\":%d,\"nodes\":%zu,\"cycles\":%zu,\"median_ns\":%.1f,"
        "\"p99_ns\":%llu,\"max_ns\":%llu,\"min_ns\":%llu,\"mean_ns\":%.1f,"
        "\"worker_share\":%.4f,\"ok\":%s%s}\n",
        threads, n, k, median, static_cast<unsigned long long>(samples[i99]),
        static_cast<unsigned long long>(samples[k - 1]),
        static_cast<unsigned long long>(samples[0]), sum / static_cast<double>(k), worker_share,
        ok ? "true" : "false",
        ok ? "" : ",\"error\":\"a node ran twice, before a predecessor, or not at all\"");
    return ok ? 0 : 1;
}
