// Starting and stopping the processes of a group on this host, for the two
// programs that do it: `gtpcp` (start, stop, restart) and the thread
// watchdog (replacing a dead or hung process, restarting one on request,
// stopping the group after a drain).
//
// Processes are started detached (their own session, stdout and stderr in
// their log file) and remembered by pid file; only a pid whose
// /proc/<pid>/cmdline is the program started is ever signalled. A process
// being replaced or restarted holds its lock file, so two replacements never
// start two copies of one process.
//
// Startup and control only: it forks, sleeps and allocates.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/config/instance.h"
#include "common/group/paths.h"

namespace gtpcp::group {

struct ProcessSpec {
  std::string name;    // "forwarder", "worker-0"
  std::string binary;  // absolute path
  std::vector<std::string> args;
};

// The directory of the running executable (where the other gtpcp programs are).
std::string selfDirectory();
// Whether `pid` runs and is not a zombie (a child of ours is reaped first,
// its wait status kept for reapedStatus()).
bool processAlive(int pid);
// A child of this process reaped elsewhere (the thread watchdog's loop):
// its wait status kept the same way.
void noteReaped(int pid, int wait_status);
// How child `pid` ended ("killed by signal 9 (SIGKILL)", "exited with
// status 1"), once reaped; nullopt when it was not this process's child or
// is not reaped yet. Each status is given once.
std::optional<std::string> reapedStatus(int pid);
// The last `lines` lines of `file`, indented, for a message about a process
// that did not start.
std::string logTail(const std::string& file, std::size_t lines);

class ProcessControl {
 public:
  // `config_path` as given; `bin_dir` holds (or leads to) the gtpcp binaries.
  ProcessControl(config::InstanceConfig config, std::string config_path, std::string bin_dir);

  const config::InstanceConfig& config() const noexcept { return config_; }
  const Paths& paths() const noexcept { return paths_; }
  // The group's processes, in start order: forwarder, persister (when the
  // group persists), workers, bgp-watchdog and bgpd-bridge (bgp.mode frr),
  // console (management.listen not empty), thread watchdog.
  std::vector<ProcessSpec> processes() const;
  // `name` beside this program, else as found on PATH.
  std::string findBinary(const std::string& name) const;

  // The pid of a live process started for this group, if any.
  std::optional<int> runningPid(const std::string& name) const;
  // The process the pid file names is alive, young, and not (yet) its
  // program: forked by whoever started it and not yet exec'd, its command
  // line still its parent's. Not dead: the thread watchdog waits for it
  // rather than start a second one beside it.
  bool starting(const std::string& name) const;
  // What the pid file names, alive or not.
  std::optional<int> recordedPid(const std::string& name) const;
  // Starts `spec` detached and writes its pid file.
  std::optional<int> spawn(const ProcessSpec& spec, std::ostream& out);
  // SIGTERM to one process, SIGKILL after `timeout_ms`; false when it had to
  // be killed. (SIGTERM to the watchdog drains and stops the whole group.)
  bool terminate(const std::string& name, int timeout_ms, std::ostream& out);
  // The same for `pid`, a child this process spawn()ed and has not reaped:
  // signalled whatever its command line says, since a child forked moments
  // ago may not have become its program yet (runningPid() would not know
  // it) and its pid cannot have been given to another process meanwhile.
  bool terminateChild(const std::string& name, int pid, int timeout_ms, std::ostream& out);
  // Waits until `name` serves as pid `pid` with more than `starts_before`
  // starts (the watchdog restarting itself keeps its pid).
  bool waitServing(const std::string& name, int pid, int timeout_ms, std::ostream& out,
                   uint64_t starts_before = 0);
  // How many times `name` started, from its segment (0: none yet).
  uint64_t starts(const std::string& name) const;
  // Stops and starts one process (its shared memory stays: a worker resumes
  // its sessions). The forwarder's successor starts first and takes its
  // sockets over, so a planned restart of it drops nothing.
  bool restart(const std::string& name, std::ostream& out, int timeout_ms = 10000);
  // The thread watchdog's replacement of a dead or hung process: SIGKILL if
  // it still runs (a stopped or hung one would not act on SIGTERM), then a
  // new one, waited for until it serves. Skipped (false, `busy` set) while
  // someone else replaces it.
  // `judged`: the process found failing (nullopt: none ran); another one
  // there once the lock is held was started meanwhile (an operator's restart
  // that just finished): left alone, as busy.
  bool replace(const std::string& name, std::ostream& out, int timeout_ms, bool& busy,
               std::optional<int> judged);
  // The data path's processes in the order a stop takes them (the console
  // before them, when it runs): the workers
  // first, so that the forwarder sends what they answered last; the
  // persister after them, so that it writes their last changes; the
  // bgp-watchdog and the bridge last (the route was withdrawn first). Each is
  // terminate()d, with a line for each that was running; false when one had
  // to be killed.
  bool stopDataPath(std::ostream& out, int timeout_ms);

 private:
  // restart() of the forwarder serving as `running`.
  bool handOverForwarder(const ProcessSpec& spec, int running, std::ostream& out, int timeout_ms);
  config::InstanceConfig config_;
  std::string config_path_;
  std::string bin_dir_;
  Paths paths_;
};

}  // namespace gtpcp::group
