"""Shared by the figure scripts (lossless_figures.py, perf_permutations.py, cc_comparison.py): run
`fabricsim run` under /usr/bin/time -v and read back its results, and describe the machine."""
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TimedOut(Exception):
    """A run stopped after `seconds` of wall time (run()'s timeout)."""

    def __init__(self, seconds):
        super().__init__(f"stopped after {seconds:.0f} s")
        self.seconds = seconds


def run(binary, topology, args, ok=(0,), timeout=None):
    """Runs `binary run ROOT/topology --quiet --out ... ARGS`; returns (results, wall s, peak RSS MiB),
    whole-process figures. Exits on a status outside `ok`. With `timeout` (s), a run still going
    then is stopped (its whole process group) and TimedOut raised."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = ["/usr/bin/time", "-v", binary, "run", os.path.join(ROOT, topology), "--quiet", "--out", out] + args
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as proc:
            try:
                _, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.communicate()
                raise TimedOut(timeout)
        if proc.returncode not in ok:
            sys.exit("failed: " + " ".join(cmd) + "\n" + stderr)
        seconds, rss = time_v(stderr)
        with open(out) as f:
            return json.load(f), seconds, rss


def time_v(stderr):
    """(wall s, peak RSS MiB) from what /usr/bin/time -v wrote."""
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1)) / 1024
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", stderr).group(1)
    return sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":")))), rss


def timed(argv):
    """(stdout, wall s, peak RSS MiB) of `/usr/bin/time -v ARGV` run from ROOT; exits on failure."""
    p = subprocess.run(["/usr/bin/time", "-v"] + argv, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(argv)}\n{p.stderr[-2000:]}")
    return (p.stdout,) + time_v(p.stderr)


def wall_text(seconds):
    """A wall time as the tables show it: 0.04 s, 5.6 s, 2.7 min."""
    if seconds < 1:
        return f"{seconds:.2f} s"
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


FCT_KEYS = ["p50", "p90", "p99", "max"]


def mean_network_fct(binary, topology, args, seeds):
    """Runs `args` with --seed 1..seeds; returns the means of the network transfers' FCT
    percentiles (FCT_KEYS, us) and of the first job's JCT (us)."""
    rows = []
    for seed in range(1, seeds + 1):
        r, _, _ = run(binary, topology, args + ["--seed", str(seed)])
        fct = r["flows"]["network"]["fct_us"]
        rows.append([fct[k] for k in FCT_KEYS] + [r["jobs"][0]["jct_s"] * 1e6])
    return [sum(c) / len(c) for c in zip(*rows)]


def version(binary):
    """What `binary --version` prints, e.g. 'fabricsim 0.1.0 (abc1234)' (the commit it was built from)."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    return out or f"{os.path.basename(binary)} (version unknown)"


def commit(binary):
    """The commit `binary --version` names ('unknown' if none); results carry the same."""
    m = re.search(r"\(([^)]+)\)", version(binary))
    return m.group(1) if m else "unknown"


def machine():
    """'N vCPU <model>', from /proc/cpuinfo where it exists."""
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} vCPU {model}"
