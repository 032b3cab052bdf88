// The bridge's life, made visible to FRR: a TUN interface that exists only
// while the bridge holds its file descriptor. The group's service addresses
// are routed to it by static routes (frr_plan.h), and bgpd announces them
// only while those routes are in zebra's table; when the bridge dies,
// however it dies, the kernel removes the interface, zebra the routes and
// bgpd the announcement, with no process left to do it.
//
// Nothing is ever sent on it: the service addresses are local (their local
// route wins over this one), so the interface carries no traffic.
#pragma once

#include <string>

#include <tl/expected.hpp>

namespace gtpcp::bridge {

class LeaseLink {
 public:
  // Creates (or, after a predecessor died, creates again) interface `name`
  // and sets it up. Needs CAP_NET_ADMIN and /dev/net/tun.
  static tl::expected<LeaseLink, std::string> open(const std::string& name);
  LeaseLink(LeaseLink&& other) noexcept : fd_(other.fd_), name_(std::move(other.name_)) { other.fd_ = -1; }
  LeaseLink& operator=(LeaseLink&&) = delete;
  LeaseLink(const LeaseLink&) = delete;
  ~LeaseLink();

  const std::string& name() const noexcept { return name_; }
  // Whether the interface is still up (someone may have set it down).
  bool up() const;
  // Sets it up again.
  bool raise() const;

 private:
  LeaseLink(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  int fd_ = -1;
  std::string name_;
};

}  // namespace gtpcp::bridge
