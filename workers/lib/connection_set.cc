#include "connection_set.h"

#include <cstring>

namespace gtpcp::worker {

using namespace gtp::v2;

namespace {

// The entry of SessionShm::csids that an FQ-CSID of `message_type` with
// `instance` fills, or kCsidNodes for one the proxy does not keep.
std::size_t slotOf(MessageType message_type, uint8_t instance) noexcept {
  constexpr auto kAccessCore = static_cast<std::size_t>(CsidNode::kAccessCore);
  constexpr auto kSgw = static_cast<std::size_t>(CsidNode::kSgw);
  constexpr auto kPgw = static_cast<std::size_t>(CsidNode::kPgw);
  switch (message_type) {
    case MessageType::kCreateSessionRequest:
      // Table 7.2.1-1: MME 0, SGW 1, ePDG 2, TWAN 3.
      return instance == 1 ? kSgw : instance <= 3 ? kAccessCore : kCsidNodes;
    case MessageType::kModifyBearerRequest:
    case MessageType::kUpdatePdnConnectionSetRequest:
      // Tables 7.2.7-1 and 7.9.5-1: MME 0, SGW 1.
      return instance == 0 ? kAccessCore : instance == 1 ? kSgw : kCsidNodes;
    case MessageType::kCreateSessionResponse:
    case MessageType::kModifyBearerResponse:
    case MessageType::kUpdatePdnConnectionSetResponse:
      // The PGW's is instance 0; the SGW's (instance 1) is the MME's concern.
      return instance == 0 ? kPgw : kCsidNodes;
    default:
      return kCsidNodes;
  }
}

// The node-ID of `fq` as CsidShm keeps it; returns its length.
std::size_t nodeIdOctets(const FqCsid& fq, uint8_t (&out)[16]) noexcept {
  if (fq.ipv6) {
    std::memcpy(out, fq.ipv6->octets.data(), 16);
    return 16;
  }
  if (fq.ipv4) {
    std::memcpy(out, fq.ipv4->octets.data(), 4);
    return 4;
  }
  out[0] = static_cast<uint8_t>(fq.node_id >> 24);
  out[1] = static_cast<uint8_t>(fq.node_id >> 16);
  out[2] = static_cast<uint8_t>(fq.node_id >> 8);
  out[3] = static_cast<uint8_t>(fq.node_id);
  return 4;
}

}  // namespace

void noteCsids(SessionShm& session, const Message& m) noexcept {
  const MessageType type = m.messageType();
  if (slotOf(type, 0) == kCsidNodes && slotOf(type, 1) == kCsidNodes) return;
  for (const Ie& ie : m.topLevel()) {
    if (ie.ieType() != IeType::kFqCsid) continue;
    const std::size_t slot = slotOf(type, ie.instance());
    if (slot == kCsidNodes) continue;
    auto fq = read<FqCsid>(m, ie);
    // A connection belongs to one set of each node: the first CSID names it.
    if (!fq || fq->csid_count == 0) continue;
    CsidShm& c = session.csids[slot];
    c = CsidShm{};
    c.node_id_type = static_cast<uint8_t>(fq->node_id_type + 1);
    c.csid = fq->csids[0];
    nodeIdOctets(*fq, c.node_id);
  }
}

bool csidIn(const CsidShm& stored, const FqCsid& fq) noexcept {
  if (stored.node_id_type != fq.node_id_type + 1) return false;
  uint8_t node[16];
  if (std::memcmp(stored.node_id, node, nodeIdOctets(fq, node)) != 0) return false;
  for (std::size_t i = 0; i < fq.csid_count && i < FqCsid::kMaxCsids; ++i)
    if (fq.csids[i] == stored.csid) return true;
  return false;
}

bool CsidSet::read(const Message& m) noexcept {
  count_ = 0;
  for (const Ie& ie : m.topLevel()) {
    if (ie.ieType() != IeType::kFqCsid || ie.instance() > 4 || count_ == kMaxFqCsids) continue;
    auto fq = gtp::v2::read<FqCsid>(m, ie);
    if (fq && fq->csid_count != 0) sets_[count_++] = *fq;
  }
  return count_ != 0;
}

bool CsidSet::matches(const SessionShm& session) const noexcept {
  for (const CsidShm& stored : session.csids) {
    if (stored.node_id_type == 0) continue;
    for (std::size_t i = 0; i < count_; ++i)
      if (csidIn(stored, sets_[i])) return true;
  }
  return false;
}

}  // namespace gtpcp::worker
