// gtpcp-blast: a surge of session creations, for the overload benchmark.
//
// Sends Create Session Requests at a fixed rate, far beyond what the
// emulator's full SGW logic could offer, and only counts the answers by
// cause. The requests of --distinct subscribers are built once; sending one
// costs a sequence number patch and its share of a sendmmsg call, so that
// one core offers several times what a proxy core can take. The point is
// what the proxy does to everyone else while new sessions flood it (DESIGN.md: the new ring fills, the forwarder
// refuses with No resources available, established sessions keep flowing).
// Bounded in count and time; loopback only.
//
//   gtpcp-blast --proxy 127.0.0.1 --from 127.0.0.13 --rate 100000 --seconds 5
// prints one JSON object: sent, answered, accepted, rejected_73, other.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/gtp/constants.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/patch.h"
#include "tools/peer/messages.h"

namespace {

int64_t monotonicNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

constexpr std::size_t kBatch = 256;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gtpcp-blast: a surge of Create Session Requests, answers counted by cause"};
  std::string proxy = "127.0.0.1", from = "127.0.0.13", apn_text = "internet";
  double rate = 50000, seconds = 5;
  uint64_t imsi_start = 101999000000000ull;  // 15 digits
  uint32_t subscribers = 1'000'000;
  uint32_t distinct = 65536;
  app.add_option("--proxy", proxy, "The proxy's access address (port 2123)");
  app.add_option("--from", from, "Local address to send from (port 2123: answers come back there)");
  app.add_option("--rate", rate, "Requests per second")->check(CLI::Range(1.0, 10'000'000.0));
  app.add_option("--seconds", seconds, "How long")->check(CLI::Range(0.1, 60.0));
  app.add_option("--imsi-start", imsi_start, "IMSI of the first subscriber");
  app.add_option("--subscribers", subscribers, "Distinct subscribers, used round-robin")->check(CLI::Range(1u, 10'000'000u));
  app.add_option("--apn", apn_text, "APN");
  app.add_option("--distinct", distinct, "Requests built in advance (distinct IMSIs and TEIDs), sent in turn")
      ->check(CLI::Range(1u, 1'000'000u));
  CLI11_PARSE(app, argc, argv);

  sockaddr_in to{}, local{};
  to.sin_family = local.sin_family = AF_INET;
  to.sin_port = local.sin_port = htons(gtpcp::gtp::kGtpcPort);
  if (inet_pton(AF_INET, proxy.c_str(), &to.sin_addr) != 1 || inet_pton(AF_INET, from.c_str(), &local.sin_addr) != 1) {
    std::fprintf(stderr, "gtpcp-blast: --proxy and --from must be IPv4 addresses\n");
    return 2;
  }
  if ((ntohl(to.sin_addr.s_addr) >> 24) != 127 || (ntohl(local.sin_addr.s_addr) >> 24) != 127) {
    std::fprintf(stderr, "gtpcp-blast: loopback addresses only (127.0.0.0/8)\n");
    return 2;
  }
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  int buf = 32 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    std::perror("gtpcp-blast: bind");
    return 1;
  }

  if (imsi_start < 100000000000000ull || imsi_start + subscribers > 999999999999999ull) {
    std::fprintf(stderr, "gtpcp-blast: --imsi-start and --subscribers must keep IMSIs at 15 digits\n");
    return 2;
  }
  gtpcp::peer::Identities ids;
  ids.imsi_start = imsi_start;
  ids.msisdn_start = 49170000000ull;
  ids.count = subscribers;
  gtpcp::gtp::v2::Apn apn;
  for (char c : apn_text) apn.text.push(c);
  // Built once: the subscribers' requests, each patched with its sequence
  // number as it goes. The sequence number runs through 2^23 values before
  // it repeats, longer than a transaction lives at any rate this sends.
  distinct = std::min(distinct, subscribers);
  std::vector<uint8_t> store;
  std::vector<std::pair<std::size_t, std::size_t>> requests;  // offset, size in store
  {
    std::vector<uint8_t> scratch(gtpcp::peer::kMaxBuiltMessage);
    for (uint32_t index = 0; index < distinct; ++index) {
      gtpcp::peer::CreateSessionRequestArgs a;
      a.sequence = 0;
      a.index = index;
      a.ids = &ids;
      a.apn = &apn;
      a.sgw_addr = ntohl(local.sin_addr.s_addr);
      a.sgw_teid = index + 1;
      auto size = gtpcp::peer::buildCreateSessionRequest(a, scratch);
      if (!size) {
        std::fprintf(stderr, "gtpcp-blast: cannot build request %u\n", index);
        return 1;
      }
      requests.emplace_back(store.size(), *size);
      store.insert(store.end(), scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(*size));
    }
  }
  std::vector<iovec> iov(kBatch);
  std::vector<mmsghdr> msgs(kBatch);
  std::vector<uint8_t> rx(65536);

  uint64_t sent = 0, answered = 0, accepted = 0, rejected_73 = 0, other = 0, send_failed = 0;
  auto drain = [&] {
    for (;;) {
      const ssize_t n = recv(fd, rx.data(), rx.size(), MSG_DONTWAIT);
      if (n <= 0) return;
      gtpcp::gtp::v2::Message m;
      if (!m.decode(std::span<const uint8_t>(rx.data(), static_cast<std::size_t>(n)))) continue;
      ++answered;
      auto cause = gtpcp::gtp::v2::readFirst<gtpcp::gtp::v2::CauseIe>(m);
      if (!cause) continue;
      if (gtpcp::gtp::v2::causeAccepted(cause->value)) {
        ++accepted;
      } else if (cause->value == 73) {
        ++rejected_73;
      } else {
        ++other;
      }
    }
  };

  const int64_t start = monotonicNs();
  const int64_t end = start + static_cast<int64_t>(seconds * 1e9);
  uint32_t index = 0;
  for (int64_t now = start; now < end; now = monotonicNs()) {
    const auto due = static_cast<uint64_t>(static_cast<double>(now - start) * rate / 1e9);
    if (sent >= due) {
      drain();
      timespec pause{0, 50'000};
      nanosleep(&pause, nullptr);
      continue;
    }
    const std::size_t count = static_cast<std::size_t>(std::min<uint64_t>(kBatch, due - sent));
    for (std::size_t i = 0; i < count; ++i) {
      const auto [offset, size] = requests[index];
      index = index + 1 == distinct ? 0 : index + 1;
      const std::span<uint8_t> bytes(store.data() + offset, size);
      gtpcp::gtp::v2::patchSequenceNumber(bytes, static_cast<uint32_t>((sent + i) & 0x7fffff));
      iov[i] = iovec{bytes.data(), bytes.size()};
      msgs[i] = mmsghdr{};
      msgs[i].msg_hdr.msg_name = &to;
      msgs[i].msg_hdr.msg_namelen = sizeof to;
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int n = sendmmsg(fd, msgs.data(), static_cast<unsigned>(count), 0);
    if (n < static_cast<int>(count)) send_failed += count - static_cast<std::size_t>(std::max(n, 0));
    sent += count;  // a refused send counts as offered: the rate is the offer
    drain();
  }
  // Answers still on their way.
  const int64_t settle = monotonicNs() + 500'000'000;
  while (monotonicNs() < settle) {
    drain();
    timespec pause{0, 1'000'000};
    nanosleep(&pause, nullptr);
  }
  close(fd);
  const double elapsed = static_cast<double>(end - start) / 1e9;
  std::printf("{\"sent\": %llu, \"offered_per_s\": %.0f, \"send_failed\": %llu, \"answered\": %llu, \"accepted\": %llu, "
              "\"rejected_73\": %llu, \"other\": %llu}\n",
              static_cast<unsigned long long>(sent), static_cast<double>(sent) / elapsed,
              static_cast<unsigned long long>(send_failed), static_cast<unsigned long long>(answered),
              static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(rejected_73),
              static_cast<unsigned long long>(other));
  return 0;
}
