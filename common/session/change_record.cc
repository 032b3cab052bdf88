#include "common/session/change_record.h"

namespace gtpcp::session {

bool ChangeView::parse(std::span<const uint8_t> record, ChangeView& out) noexcept {
  if (record.size() < sizeof(ChangeHeader) ||
      reinterpret_cast<uintptr_t>(record.data()) % alignof(ChangeHeader) != 0)
    return false;
  out.header = reinterpret_cast<const ChangeHeader*>(record.data());
  if (out.header->kind != static_cast<uint16_t>(ChangeKind::kUpsert) &&
      out.header->kind != static_cast<uint16_t>(ChangeKind::kDelete))
    return false;
  out.attributes = record.subspan(sizeof(ChangeHeader));
  return true;
}

}  // namespace gtpcp::session
