// A planned restart of the forwarder without a gap (`gtpcp restart
// forwarder`). The launcher starts the successor while the forwarder still
// serves; the successor connects to the running one's hand-over socket
// (Paths::forwarderHandoverSocket(), unix seqpacket). The running forwarder
// ends its turn as usual (what it read is dispatched and published, what it
// took from the egress rings is sent and released), stops touching sockets
// and rings, and passes its GTP-C sockets and its bell socket with
// SCM_RIGHTS. The kernel goes on queueing datagrams on those same sockets, in
// the same reuseport groups with the same steering program, so none is
// dropped and no peer retransmits: the successor reads them a few
// milliseconds later. The successor checks that the sockets are bound where
// its own configuration says, confirms with one octet and serves; the
// predecessor, on the confirmation, exits without closing anything of
// consequence (its copies of the descriptors only).
//
// Who touches the rings: the predecessor stops before it sends; the
// successor attaches only after it has the sockets. The predecessor resumes
// only on a refusal or when the connection closes unconfirmed (the successor
// exited), never on a guess: a successor slower than kConfirmWait is cut off
// first (shutdown), so its late confirmation fails and it exits.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "common/net/address.h"

namespace gtpcp::forwarder {

struct HandedSockets {
  std::vector<int> sockets;      // per address of the socket plan: the session socket
  std::vector<int> new_sockets;  // per address: the new-session socket, -1 when creations are not steered
  int bell = -1;                 // the bell socket the workers ring
  void closeAll() noexcept;
};

// The serving forwarder's end.
class HandoverListener {
 public:
  // How long a predecessor that sent its sockets waits for the confirmation.
  static constexpr std::chrono::milliseconds kConfirmWait{10'000};

  static tl::expected<HandoverListener, std::string> listen(const std::string& path);
  HandoverListener(HandoverListener&& o) noexcept;
  HandoverListener& operator=(HandoverListener&&) = delete;
  ~HandoverListener();  // closes; removes the path unless a successor bound it since

  int fd() const noexcept { return fd_; }
  // A successor connected (the socket is readable): hands `sockets` over.
  // True: the successor confirmed and owns them and the rings; touch
  // nothing more. False: carry on serving (`why` says what happened; no
  // successor was waiting, it refused, or it went away).
  bool handOver(const HandedSockets& sockets, std::string& why) noexcept;

 private:
  HandoverListener(int fd, std::string path, uint64_t inode) noexcept
      : fd_(fd), path_(std::move(path)), inode_(inode) {}
  int fd_ = -1;
  std::string path_;
  uint64_t inode_ = 0;
};

// The successor's end: the sockets taken over (the caller's to keep, or to
// close if it gives up) and the link to the predecessor until it confirms.
class Inherited {
 public:
  Inherited(HandedSockets handed, int connection) noexcept : sockets(std::move(handed)), connection_(connection) {}
  Inherited(Inherited&& o) noexcept;
  Inherited& operator=(Inherited&&) = delete;
  ~Inherited();  // unconfirmed: the predecessor is told, and resumes

  HandedSockets sockets;
  // Tells the predecessor to stop for good. False: it already resumed (this
  // process took too long) and the sockets are not this process's to use.
  bool confirm() noexcept;

 private:
  int connection_ = -1;
  bool confirmed_ = false;
};

// Asks the forwarder serving at `path` for its sockets. nullopt: none serves
// there (not running, or stopped). An error: one serves but did not hand
// over, or what it handed does not match `plan` (the configuration's
// addresses changed: a restart cannot keep the sockets).
tl::expected<std::optional<Inherited>, std::string> takeOver(const std::string& path,
                                                             const std::vector<net::Address>& plan,
                                                             std::chrono::milliseconds timeout);

}  // namespace gtpcp::forwarder
