#include "commands.h"

namespace gtpcp::persister {

void Commands::clear() noexcept {
  arena_.clear();
  pieces_.clear();
  commands_.clear();
  pending_.clear();
  args_.clear();
  argvs_.clear();
  transactions_.clear();
}

void Commands::beginTransaction(bool multi) noexcept {
  pending_.push_back(Pending{0, multi, {}, Range{static_cast<uint32_t>(commands_.size()), 0}});
  if (multi) command({text(kMulti)});
}

void Commands::beginCommand() noexcept { commands_.push_back(Range{static_cast<uint32_t>(pieces_.size()), 0}); }

void Commands::arg(const Piece& p) noexcept {
  pieces_.push_back(p);
  ++commands_.back().count;
}

void Commands::command(std::initializer_list<Piece> args) noexcept {
  beginCommand();
  for (const Piece& p : args) arg(p);
}

void Commands::endTransaction(uint16_t slot, const Piece& key) noexcept {
  Pending& t = pending_.back();
  if (t.multi) command({text(kExec)});
  t.slot = slot;
  t.key = key;
  t.commands.count = static_cast<uint32_t>(commands_.size()) - t.commands.first;
}

void Commands::seal() noexcept {
  args_.resize(pieces_.size());
  for (std::size_t i = 0; i < pieces_.size(); ++i) args_[i] = view(pieces_[i]);
  argvs_.resize(commands_.size());
  for (std::size_t i = 0; i < commands_.size(); ++i)
    argvs_[i] = RedisArgv(args_.data() + commands_[i].first, commands_[i].count);
  transactions_.resize(pending_.size());
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const Pending& p = pending_[i];
    transactions_[i] =
        Transaction{p.slot, view(p.key), std::span<const RedisArgv>(argvs_.data() + p.commands.first, p.commands.count)};
  }
}

}  // namespace gtpcp::persister
