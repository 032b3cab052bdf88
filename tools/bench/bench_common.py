"""What the benchmark's phases share: printing, stopping what they started,
and reading a process's CPU time."""
import os
import signal
import subprocess


def log(msg):
    print(msg, flush=True)


def terminate(proc):
    """SIGTERM to a process we started, SIGKILL if it is still there 5 s later."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpu_ns(pid):
    """Run time of every thread of `pid`, in ns (schedstat's first field)."""
    total = 0
    task_dir = f"/proc/{pid}/task"
    for tid in os.listdir(task_dir):
        try:
            with open(f"{task_dir}/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total
