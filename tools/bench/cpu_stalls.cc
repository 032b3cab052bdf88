// gtpcp-cpu-stalls: how much wall time each CPU of this machine loses to
// things no process controls (hypervisor steal, host interrupts).
//
// One thread per CPU, pinned, reads CLOCK_MONOTONIC in a tight loop; any gap
// between two reads is time that CPU ran something else. On an idle guest
// those gaps are the host's, and they bound the latency any process here
// can promise: a datagram in flight when its CPU disappears for 1 ms waits
// 1 ms. Run it on an otherwise idle machine; it spins every CPU for the
// given time and prints one JSON object.
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kThresholdsNs[] = {100'000, 500'000, 1'000'000};
constexpr int kThresholds = sizeof kThresholdsNs / sizeof kThresholdsNs[0];

int64_t monotonicNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

struct Probe {
  int cpu = 0;
  int64_t lost_ns[kThresholds] = {};
  int64_t count[kThresholds] = {};
  int64_t longest_ns = 0;
};

void spin(Probe& p, int64_t duration_ns) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(p.cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  const int64_t end = monotonicNs() + duration_ns;
  int64_t last = monotonicNs();
  while (last < end) {
    const int64_t now = monotonicNs();
    const int64_t gap = now - last;
    for (int i = 0; i < kThresholds; ++i)
      if (gap >= kThresholdsNs[i]) {
        p.lost_ns[i] += gap;
        ++p.count[i];
      }
    if (gap > p.longest_ns) p.longest_ns = gap;
    last = now;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  if (!(seconds > 0 && seconds <= 60)) {
    std::fprintf(stderr, "usage: gtpcp-cpu-stalls [SECONDS (0..60], default 3]\n");
    return 2;
  }
  cpu_set_t allowed;
  sched_getaffinity(0, sizeof allowed, &allowed);
  std::vector<Probe> probes;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) probes.push_back(Probe{.cpu = c});
  const auto duration_ns = static_cast<int64_t>(seconds * 1e9);
  std::vector<std::thread> threads;
  for (auto& p : probes) threads.emplace_back(spin, std::ref(p), duration_ns);
  for (auto& t : threads) t.join();

  std::string out = "{\"seconds\": " + std::to_string(seconds) + ", \"cpus\": [";
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const Probe& p = probes[i];
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s{\"cpu\": %d, \"longest_ms\": %.3f, \"stalls\": {\"100us\": {\"count\": %lld, "
                  "\"lost_pct\": %.3f}, \"500us\": {\"count\": %lld, \"lost_pct\": %.3f}, "
                  "\"1ms\": {\"count\": %lld, \"lost_pct\": %.3f}}}",
                  i ? ", " : "", p.cpu, p.longest_ns / 1e6, static_cast<long long>(p.count[0]),
                  100.0 * p.lost_ns[0] / duration_ns, static_cast<long long>(p.count[1]),
                  100.0 * p.lost_ns[1] / duration_ns, static_cast<long long>(p.count[2]),
                  100.0 * p.lost_ns[2] / duration_ns);
    out += buf;
  }
  out += "]}";
  std::puts(out.c_str());
  return 0;
}
