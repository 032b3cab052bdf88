// PDN connection sets (TS 23.007 §16, TS 29.274 §7.9): a node that fails
// partially names the PDN connections it lost by its FQ-CSIDs, and its peers
// delete them all with one Delete PDN Connection Set Request.
//
// The proxy passes every FQ-CSID through unchanged, so the node-IDs in them
// stay the real nodes' and a peer on the other leg can resolve them itself.
// What the proxy keeps, per session, is the CSID each node gave the
// connection (SessionShm::csids), so that it can delete its own copies of the
// connections a set names and tell the peers on the other leg.
#pragma once

#include <array>
#include <cstdint>

#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "worker_layout.h"

namespace gtpcp::worker {

// Records the FQ-CSIDs that `m`, a message of the session, carries: a Create
// Session, Modify Bearer or Update PDN Connection Set Request (the MME's or
// ePDG's or TWAN's and the SGW's) or their responses (the PGW's). Other
// messages carry none the proxy keeps.
void noteCsids(SessionShm& session, const gtp::v2::Message& m) noexcept;

// Whether `stored` names the same node as `fq` and one of its CSIDs.
bool csidIn(const CsidShm& stored, const gtp::v2::FqCsid& fq) noexcept;

// The FQ-CSIDs of a Delete PDN Connection Set Request (MME, SGW, PGW, ePDG,
// TWAN: instances 0-4, Table 7.9.1-1).
class CsidSet {
 public:
  static constexpr std::size_t kMaxFqCsids = 5;
  // Reads them; false when the request names none.
  bool read(const gtp::v2::Message& m) noexcept;
  // Whether one of the session's CSIDs is in the set. Node-IDs are unique
  // (an address or an MCC/MNC-based value of the node), so the node's role is
  // not compared: an MME's FQ-CSID matches the CSID the MME gave, whichever
  // IE instance named it.
  bool matches(const SessionShm& session) const noexcept;
  std::size_t size() const noexcept { return count_; }

 private:
  std::array<gtp::v2::FqCsid, kMaxFqCsids> sets_{};
  std::size_t count_ = 0;
};

}  // namespace gtpcp::worker
