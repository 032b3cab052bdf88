// Named POSIX shared-memory segments ("/gtpcp.<group>.<object>") that gtpcp
// processes create, attach to and validate (Boost.Interprocess underneath).
//
// Who initialises is decided by the operating system: the process whose
// exclusive create (O_EXCL) succeeds zero-fills the segment, writes the header,
// runs the caller's initialiser on the payload and publishes the magic last;
// everyone else attaches, waits (at most kInitWait) while the magic is still 0,
// and checks magic, layout version, kind and size. A segment that does not
// match is refused with a message naming the object and the mismatch, e.g.
// "shared memory /gtpcp.demo.w0.prio: layout version 7, this build understands 1".
//
// Everything here runs at startup or on a restart: it allocates, may sleep
// (while waiting for a creator), and reports failures as values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/ring/errors.h"
#include "common/ring/segment_shm.h"

namespace boost::interprocess {
class mapped_region;
}

namespace gtpcp::ring {

// Longest name shmName() accepts, leading slash included.
inline constexpr std::size_t kMaxShmNameLength = 200;

// "/gtpcp.<group>.<object>". `group` and `object` are non-empty and made of
// [A-Za-z0-9_.-] (no slash: POSIX allows none after the first); the whole name
// is at most kMaxShmNameLength octets. Anything else is an error naming the
// offending part.
Result<std::string> makeShmName(std::string_view group, std::string_view object);

// As makeShmName(), for names built from validated configuration or constants:
// misuse is a programming error, so it prints the reason and aborts.
std::string shmName(std::string_view group, std::string_view object);

// Whether a new segment's pages are committed at creation.
enum class Prefault : uint8_t {
  kYes,  // rings: no page fault ever on the data path
  kNo,   // large tables filled as they are used (sessions): memory only as needed
};

class SharedSegment {
 public:
  // How long an attacher waits for a creator that is still initialising.
  static constexpr std::chrono::milliseconds kInitWait{2000};

  // Runs in the creator only, on the zero-filled payload, before the magic is
  // published: attachers never see a payload it has not finished. An error
  // aborts the creation (the object is removed) and is returned as is.
  using Initializer = std::function<Result<void>(void* payload, std::size_t payload_size)>;

  // Creates `name` with a payload of `payload_size` octets if it does not
  // exist, or attaches to it after checking magic, layout version, `kind` and
  // `payload_size`. `init` (optional) lays out the payload of a new segment.
  static Result<SharedSegment> createOrAttach(const std::string& name, std::size_t payload_size,
                                              uint32_t kind, const Initializer& init = {},
                                              Prefault prefault = Prefault::kYes);

  // Attaches to an existing `name` of this `kind`, whatever its payload size
  // (payloadSize() tells it). Errc::kNotFound when it does not exist.
  static Result<SharedSegment> attach(const std::string& name, uint32_t kind);

  // Removes the name; mappings that exist stay valid until unmapped. False
  // when there was nothing to remove (or the system refused).
  static bool remove(const std::string& name);

  // Whether `name` exists, without attaching: one shm_open(2), no exception
  // on the way (a process that looks for a neighbour's segment in its loop
  // until the neighbour made it).
  static bool exists(const std::string& name) noexcept;

  SharedSegment(SharedSegment&&) noexcept;
  SharedSegment& operator=(SharedSegment&&) noexcept;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment();  // unmaps; never removes the name

  void* payload() const noexcept { return payload_; }
  std::size_t payloadSize() const noexcept { return payload_size_; }
  const std::string& name() const noexcept { return name_; }
  // True in the process that created the segment (and ran the initialiser).
  bool created() const noexcept { return created_; }
  const SegmentHeaderShm& header() const noexcept {
    return *static_cast<const SegmentHeaderShm*>(static_cast<const void*>(
        static_cast<const unsigned char*>(payload_) - kSegmentPayloadOffset));
  }

 private:
  SharedSegment(std::string name, std::unique_ptr<boost::interprocess::mapped_region> region,
                std::size_t payload_size, bool created);

  std::string name_;
  std::unique_ptr<boost::interprocess::mapped_region> region_;
  void* payload_ = nullptr;
  std::size_t payload_size_ = 0;
  bool created_ = false;
};

}  // namespace gtpcp::ring
