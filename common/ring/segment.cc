#include "common/ring/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

namespace gtpcp::ring {

namespace bip = boost::interprocess;

namespace {

// Far beyond any ring or session table, and small enough that offset + size
// cannot overflow anywhere.
constexpr std::size_t kMaxPayloadSize = std::size_t{1} << 40;
// How often an attacher looks again at a segment that is being initialised:
// initialisation is a memset and a few stores, so 1 ms is plenty fine-grained.
constexpr std::chrono::milliseconds kInitPoll{1};
// A create that finds the name taken, then an open that finds it gone (a
// concurrent remove()) tries again, this many times in all.
constexpr int kCreateAttempts = 3;

bool allowedNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-';
}

std::string checkNamePart(std::string_view what, std::string_view part) {
  if (part.empty()) return "shared memory name: " + std::string(what) + " is empty";
  for (std::size_t i = 0; i < part.size(); ++i) {
    const char c = part[i];
    if (allowedNameChar(c)) continue;
    char shown[16];
    if (c > ' ' && c < 0x7f) {
      std::snprintf(shown, sizeof shown, "'%c'", c);
    } else {
      std::snprintf(shown, sizeof shown, "0x%02x", static_cast<unsigned char>(c));
    }
    return "shared memory name: " + std::string(what) + " '" + std::string(part) + "' has " +
           shown + " at offset " + std::to_string(i) + "; allowed are A-Z a-z 0-9 _ . -";
  }
  return {};
}

std::string prefix(const std::string& name) { return "shared memory " + name + ": "; }

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

SegmentHeaderShm* headerOf(bip::mapped_region& region) {
  return static_cast<SegmentHeaderShm*>(region.get_address());
}

// Opens an existing segment and validates it. `expected_payload` is 0 when any
// size is acceptable (attach()).
Result<std::unique_ptr<bip::mapped_region>> openExisting(const std::string& name, uint32_t kind,
                                                         std::size_t expected_payload,
                                                         uint64_t* payload_size) {
  const auto deadline = std::chrono::steady_clock::now() + SharedSegment::kInitWait;
  const int max_polls = static_cast<int>(SharedSegment::kInitWait / kInitPoll) + 1;
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_write);

    // The creator sizes the object right after creating it: size 0 means we
    // came between its shm_open and its ftruncate.
    bip::offset_t size = 0;
    for (int poll = 0; poll < max_polls; ++poll) {
      if (!shm.get_size(size)) return fail(Errc::kSystem, prefix(name) + "cannot read its size");
      if (size > 0 || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(kInitPoll);
    }
    if (size == 0) {
      return fail(Errc::kNotInitialised,
                  prefix(name) + "still empty after " + std::to_string(SharedSegment::kInitWait.count()) +
                      " ms (its creator may have died while creating it; remove it and retry)");
    }
    if (static_cast<std::size_t>(size) < kSegmentPayloadOffset) {
      return fail(Errc::kMismatch, prefix(name) + "size " + std::to_string(size) +
                                       " octets, smaller than a segment header (" +
                                       std::to_string(kSegmentPayloadOffset) + ")");
    }
    auto region = std::make_unique<bip::mapped_region>(shm, bip::read_write);
    SegmentHeaderShm* header = headerOf(*region);

    uint64_t magic = 0;
    for (int poll = 0; poll < max_polls; ++poll) {
      // SEG-A1 pairs with SEG-R1 in SharedSegment::createOrAttach(): once the magic is
      // seen, the header and the initialised payload are too.
      magic = header->magic.load(std::memory_order_acquire);
      if (magic != 0 || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(kInitPoll);
    }
    if (magic == 0) {
      return fail(Errc::kNotInitialised,
                  prefix(name) + "still not initialised after " +
                      std::to_string(SharedSegment::kInitWait.count()) +
                      " ms (its creator may have died while creating it; remove it and retry)");
    }
    if (magic != kSegmentMagic) {
      return fail(Errc::kMismatch, prefix(name) + "magic " + hex64(magic) + ", expected " +
                                       hex64(kSegmentMagic) + " (not a gtpcp segment)");
    }
    // The version first: another version may place the other fields elsewhere.
    if (header->layout_version != kSegmentLayoutVersion) {
      return fail(Errc::kMismatch, prefix(name) + "layout version " +
                                       std::to_string(header->layout_version) +
                                       ", this build understands " +
                                       std::to_string(kSegmentLayoutVersion));
    }
    if (header->kind != kind) {
      return fail(Errc::kMismatch, prefix(name) + "kind " + std::to_string(header->kind) +
                                       ", this process expects " + std::to_string(kind));
    }
    const uint64_t declared = header->payload_size;
    if (expected_payload != 0 && declared != expected_payload) {
      return fail(Errc::kMismatch, prefix(name) + "payload size " + std::to_string(declared) +
                                       ", this process expects " +
                                       std::to_string(expected_payload));
    }
    if (declared > kMaxPayloadSize ||
        static_cast<uint64_t>(size) < kSegmentPayloadOffset + declared) {
      return fail(Errc::kMismatch, prefix(name) + "object of " + std::to_string(size) +
                                       " octets cannot hold the " + std::to_string(declared) +
                                       "-octet payload its header declares");
    }
    *payload_size = declared;
    return region;
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::not_found_error) {
      return fail(Errc::kNotFound, prefix(name) + "does not exist");
    }
    return fail(Errc::kSystem, prefix(name) + "cannot attach: " + e.what());
  }
}

enum class CreateOutcome { kCreated, kExists };

// Creates `name` exclusively. On success `out` holds the mapped, initialised
// segment with its magic published.
Result<CreateOutcome> createExclusive(const std::string& name, std::size_t payload_size,
                                      uint32_t kind, const SharedSegment::Initializer& init,
                                      Prefault prefault, std::unique_ptr<bip::mapped_region>* out) {
  std::unique_ptr<bip::shared_memory_object> shm;
  try {
    shm = std::make_unique<bip::shared_memory_object>(bip::create_only, name.c_str(),
                                                      bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::already_exists_error) return CreateOutcome::kExists;
    return fail(Errc::kSystem, prefix(name) + "cannot create: " + e.what());
  }
  // From here on the name is ours: any failure removes it, so that nobody
  // waits for a magic that will never come.
  try {
    shm->truncate(static_cast<bip::offset_t>(kSegmentPayloadOffset + payload_size));
    auto region = std::make_unique<bip::mapped_region>(*shm, bip::read_write);
    // A new object reads as zeros already; writing them commits the pages now,
    // at startup, instead of page-faulting on the data path later. Large
    // tables that fill up slowly (sessions) leave their pages untouched.
    if (prefault == Prefault::kYes) {
      std::memset(region->get_address(), 0, region->get_size());
    } else {
      std::memset(region->get_address(), 0, kSegmentPayloadOffset);
    }
    SegmentHeaderShm* header = headerOf(*region);
    header->layout_version = kSegmentLayoutVersion;
    header->kind = kind;
    header->payload_size = payload_size;
    header->creator_pid = static_cast<int32_t>(::getpid());
    if (init) {
      void* payload = static_cast<unsigned char*>(region->get_address()) + kSegmentPayloadOffset;
      if (auto r = init(payload, payload_size); !r) {
        bip::shared_memory_object::remove(name.c_str());
        return tl::unexpected<Error>(std::move(r.error()));
      }
    }
    // SEG-R1 pairs with SEG-A1 in openExisting(): everything above is visible to an
    // attacher that sees the magic.
    header->magic.store(kSegmentMagic, std::memory_order_release);
    *out = std::move(region);
    return CreateOutcome::kCreated;
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    return fail(Errc::kSystem, prefix(name) + "cannot size or map " +
                                   std::to_string(kSegmentPayloadOffset + payload_size) +
                                   " octets: " + e.what());
  }
}

}  // namespace

Result<std::string> makeShmName(std::string_view group, std::string_view object) {
  if (std::string why = checkNamePart("group", group); !why.empty()) {
    return fail(Errc::kInvalidArgument, std::move(why));
  }
  if (std::string why = checkNamePart("object", object); !why.empty()) {
    return fail(Errc::kInvalidArgument, std::move(why));
  }
  std::string name = "/gtpcp.";
  name.append(group).append(".").append(object);
  if (name.size() > kMaxShmNameLength) {
    return fail(Errc::kInvalidArgument, "shared memory name '" + name + "' is " +
                                            std::to_string(name.size()) +
                                            " octets, longer than " +
                                            std::to_string(kMaxShmNameLength));
  }
  return name;
}

std::string shmName(std::string_view group, std::string_view object) {
  auto name = makeShmName(group, object);
  if (!name) {
    std::fprintf(stderr, "gtpcp: %s\n", name.error().message.c_str());
    std::abort();
  }
  return std::move(*name);
}

Result<SharedSegment> SharedSegment::createOrAttach(const std::string& name,
                                                    std::size_t payload_size, uint32_t kind,
                                                    const Initializer& init, Prefault prefault) {
  if (payload_size == 0 || payload_size > kMaxPayloadSize) {
    return fail(Errc::kInvalidArgument, prefix(name) + "payload size " +
                                            std::to_string(payload_size) +
                                            " out of range (1.." +
                                            std::to_string(kMaxPayloadSize) + ")");
  }
  Error last{Errc::kNotFound, prefix(name) + "does not exist"};
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    std::unique_ptr<bip::mapped_region> region;
    auto created = createExclusive(name, payload_size, kind, init, prefault, &region);
    if (!created) return tl::unexpected<Error>(std::move(created.error()));
    if (*created == CreateOutcome::kCreated) {
      return SharedSegment(name, std::move(region), payload_size, true);
    }
    uint64_t size = 0;
    auto attached = openExisting(name, kind, payload_size, &size);
    if (attached) return SharedSegment(name, std::move(*attached), size, false);
    // Removed between our create and our open: the name is free again.
    if (attached.error().code != Errc::kNotFound) return tl::unexpected<Error>(attached.error());
    last = std::move(attached.error());
  }
  return tl::unexpected<Error>(std::move(last));
}

Result<SharedSegment> SharedSegment::attach(const std::string& name, uint32_t kind) {
  uint64_t size = 0;
  auto region = openExisting(name, kind, 0, &size);
  if (!region) return tl::unexpected<Error>(std::move(region.error()));
  return SharedSegment(name, std::move(*region), size, false);
}

bool SharedSegment::exists(const std::string& name) noexcept {
  const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

bool SharedSegment::remove(const std::string& name) {
  return bip::shared_memory_object::remove(name.c_str());
}

SharedSegment::SharedSegment(std::string name, std::unique_ptr<bip::mapped_region> region,
                             std::size_t payload_size, bool created)
    : name_(std::move(name)),
      region_(std::move(region)),
      payload_(static_cast<unsigned char*>(region_->get_address()) + kSegmentPayloadOffset),
      payload_size_(payload_size),
      created_(created) {}

SharedSegment::SharedSegment(SharedSegment&& other) noexcept
    : name_(std::move(other.name_)),
      region_(std::move(other.region_)),
      payload_(std::exchange(other.payload_, nullptr)),
      payload_size_(std::exchange(other.payload_size_, 0)),
      created_(std::exchange(other.created_, false)) {}

SharedSegment& SharedSegment::operator=(SharedSegment&& other) noexcept {
  if (this != &other) {
    name_ = std::move(other.name_);
    region_ = std::move(other.region_);
    payload_ = std::exchange(other.payload_, nullptr);
    payload_size_ = std::exchange(other.payload_size_, 0);
    created_ = std::exchange(other.created_, false);
  }
  return *this;
}

SharedSegment::~SharedSegment() = default;

}  // namespace gtpcp::ring
