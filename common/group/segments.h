// Who creates each shared-memory segment of a group, and how everyone else
// finds it. Every segment has exactly one owner, the process that creates it
// and lays it out (a restarted owner adopts the segment its predecessor
// left); every other process only attaches to it, and one that finds it
// missing waits for it or fails with a message naming the segment and its
// owner. No reader ever lays out a segment it does not own, so a layout is
// written by the code that knows it and by no one else.
//
//   segment (Paths::...)                 owner
//   controlSegment                       gtpcp start (the launcher)
//   forwarderSegment, gatewayTableSegment gtpcp-forwarder
//   workerSegment(I), ring(I, *),        gtpcp-worker --index I
//   workerDoorbell(I)
//   persisterSegment                     gtpcp-persister
//   watchdogSegment                      gtpcp-thread-watchdog
//   bgpWatchdogSegment                   gtpcp-bgp-watchdog
//   bridgeSegment                        gtpcp-bgpd-bridge
//   consoleSegment                       gtpcp-console
//
// A worker owns its rings, whichever end of them it is: they are sized by
// its configuration, hold its queued datagrams across its restarts, and are
// named after it. The forwarder and the persister wait for them at start
// (gtpcp start starts the workers first).
//
// Everything here runs at startup or on a restart: it allocates and sleeps.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "common/group/paths.h"
#include "common/ring/segment.h"

namespace gtpcp::group {

// How long a process starting waits for a segment its owner has not made yet.
inline constexpr std::chrono::milliseconds kOwnerWait{3000};

// The owners, as the operator knows them (for messages).
inline constexpr std::string_view kLauncherOwner = "gtpcp start";
inline constexpr std::string_view kForwarderOwner = "gtpcp-forwarder";
inline constexpr std::string_view kPersisterOwner = "gtpcp-persister";
inline constexpr std::string_view kWatchdogOwner = "gtpcp-thread-watchdog";
inline constexpr std::string_view kBgpWatchdogOwner = "gtpcp-bgp-watchdog";
inline constexpr std::string_view kBridgeOwner = "gtpcp-bgpd-bridge";
inline constexpr std::string_view kConsoleOwner = "gtpcp-console";
std::string workerOwner(uint32_t index);  // "gtpcp-worker --index 3"

// Attaches to segment `name` of `kind`, whose payload must be at least
// `min_size` octets, made by `owner`. Waits up to `wait` for the owner to
// create it (zero: one look). Missing after that: Errc::kNotFound, with a
// message naming the segment and its owner.
ring::Result<ring::SharedSegment> attachOwned(const std::string& name, uint32_t kind, std::size_t min_size,
                                              std::string_view owner, std::chrono::milliseconds wait);

// The owner's side of a segment whose payload is one T: creates `name` with
// a value-initialised T, or adopts the one a predecessor left (the layout
// is checked by `kind`).
template <class T>
ring::Result<ring::SharedSegment> createOwned(const std::string& name, uint32_t kind) {
  return ring::SharedSegment::createOrAttach(name, sizeof(T), kind, [](void* payload, std::size_t) -> ring::Result<void> {
    new (payload) T();
    return {};
  });
}

// Every segment name a group of `workers` workers may have made, for `gtpcp
// stop` to remove.
std::vector<std::string> groupSegments(const Paths& paths, uint32_t workers);

}  // namespace gtpcp::group
