// The Redis commands of one batch (persister/lib/batch.h builds them): kept
// until Redis acknowledged them all, so that a batch can be sent again
// whole, byte for byte.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redis_client.h"

namespace gtpcp::persister {

// The Redis commands of one batch, built once (Batch::build) and kept until
// Redis acknowledged them all, so that the batch can be sent again whole,
// byte for byte, without building it again. Every argument lives in one
// arena (or in static storage: command names, field names); each command is a
// RedisArgv over them, each session's commands one Transaction. clear()
// keeps every buffer's capacity.
//
// Single-threaded; the views stay valid until clear() or the next build.
class Commands {
 public:
  struct Transaction {
    uint16_t slot;                        // keySlot() of the session's key
    std::string_view key;                 // the session's key
    std::span<const RedisArgv> commands;  // MULTI, the writes, EXEC; or one write alone
  };

  std::span<const Transaction> transactions() const noexcept { return transactions_; }
  bool empty() const noexcept { return transactions_.empty(); }
  void clear() noexcept;

  // Building, from clear() to seal(). An argument is a Piece: static text,
  // or a range of the arena held by offset, because the arena moves as it
  // grows; seal() turns every Piece into a view once nothing moves any more.
  struct Piece {
    const char* fixed;  // static storage, or null: arena_[offset, offset + length)
    uint32_t offset;
    uint32_t length;
  };
  // `fixed` must outlive the Commands (a literal, a constant table).
  static Piece text(std::string_view fixed) noexcept {
    return Piece{fixed.data(), 0, static_cast<uint32_t>(fixed.size())};
  }
  // Append an argument's octets here, then take piece(where it started).
  std::string& arena() noexcept { return arena_; }
  Piece piece(std::size_t start) const noexcept {
    return Piece{nullptr, static_cast<uint32_t>(start), static_cast<uint32_t>(arena_.size() - start)};
  }
  // Valid until the arena grows.
  std::string_view view(const Piece& p) const noexcept {
    return std::string_view(p.fixed != nullptr ? p.fixed : arena_.data() + p.offset, p.length);
  }
  // A transaction: MULTI first and EXEC last when `multi`.
  void beginTransaction(bool multi) noexcept;
  void command(std::initializer_list<Piece> args) noexcept;
  void beginCommand() noexcept;  // then arg() for each argument
  void arg(const Piece& p) noexcept;
  void endTransaction(uint16_t slot, const Piece& key) noexcept;
  void seal() noexcept;

 private:
  struct Range {
    uint32_t first;
    uint32_t count;
  };
  struct Pending {
    uint16_t slot;
    bool multi;
    Piece key;
    Range commands;  // into commands_
  };

  std::string arena_;
  std::vector<Piece> pieces_;    // every argument, in order
  std::vector<Range> commands_;  // into pieces_
  std::vector<Pending> pending_;
  // What seal() made of them.
  std::vector<std::string_view> args_;
  std::vector<RedisArgv> argvs_;
  std::vector<Transaction> transactions_;
};

// Command names, for the commands the persister builds.
inline constexpr std::string_view kMulti = "MULTI", kExec = "EXEC", kHset = "HSET", kHdel = "HDEL", kDel = "DEL",
                                  kSadd = "SADD", kSrem = "SREM";

}  // namespace gtpcp::persister
